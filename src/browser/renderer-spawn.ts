/**
 * A new page and its renderer process, found by watching which renderer appears while the
 * page is created, so that most pages need no trace (renderer-memory.ts: a trace is
 * browser-wide, runs one at a time, and queued pages wait for it).
 *
 * The renderer processes below this process are listed from /proc before and after
 * `newPage`. The page's renderer is among the new ones: a page in a fresh context gets a
 * renderer of its own (contexts never share one, and the spare renderer that could have
 * been started earlier is off: chromium-features.ts), and `newPage` resolves only once that
 * renderer has answered. So when exactly one renderer is new, it is the page's. Anything
 * else leaves none or several new (another page's renderer started meanwhile, a browser
 * this process did not start), and the page is looked up by a trace, as it is when /proc
 * cannot be read.
 * Pages are created one at a time so that they do not make each other ambiguous; a
 * creation that hangs holds the next one back only so long (ambiguity stays harmless).
 */
import type { BrowserContext, Page } from "playwright";
import { processIds, processStat } from "../files/process-table.ts";
import { log } from "../log/logger.ts";
import { settleWithin } from "./deadline.ts";
import { isRendererProcess, lookUpRenderer, type RendererLookup } from "./renderer-memory.ts";

const logger = log("browser");

/** How long a page's creation waits for the one before it (a wedged browser must not hold every page back). */
const CREATION_TURN_MS = 5_000;
/** How far up the process tree a renderer may sit below this process (node → browser → zygote → renderer, with room). */
const MAX_DEPTH = 8;

let creations: Promise<unknown> = Promise.resolve();

/** Each process's parent. Any failure but a process that ended throws (the caller asks a trace). */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const pid of processIds()) {
    const ppid = Number(processStat(pid)?.[1]);
    if (Number.isInteger(ppid)) parents.set(pid, ppid);
  }
  return parents;
}

function isBelow(pid: number, ancestor: number, parents: ReadonlyMap<number, number>): boolean {
  let current = parents.get(pid);
  // The ancestor may be pid 1 itself (this process as a container's first process).
  for (let depth = 0; depth < MAX_DEPTH && current !== undefined && current > 0; depth += 1) {
    if (current === ancestor) return true;
    current = parents.get(current);
  }
  return false;
}

/** The Chromium renderer processes anywhere below `ancestor` (default: this process). */
export function rendererPidsBelow(ancestor: number = process.pid): Set<number> {
  const parents = parentsByPid();
  const renderers = new Set<number>();
  for (const pid of parents.keys()) if (isBelow(pid, ancestor, parents) && isRendererProcess(pid)) renderers.add(pid);
  return renderers;
}

export interface PageWithRenderer {
  page: Page;
  renderers: RendererLookup;
  /** How the renderer was found: the one that appeared with the page, or a trace (the fallback). */
  foundBy: "spawn" | "trace";
}

export interface NewPageOptions {
  /** How long the page may wait for a trace, when one is needed (renderer-memory.ts). */
  lookupMs: number;
  /** Lists the renderers to compare (tests put in a stranger's); default: those below this process. */
  listRenderers?: () => Set<number>;
}

/** A new page in `context`, and the renderer(s) serving it. */
export async function newPageWithRenderer(context: BrowserContext, options: NewPageOptions): Promise<PageWithRenderer> {
  const listRenderers = options.listRenderers ?? (() => rendererPidsBelow());
  const previous = creations;
  let release = () => {};
  creations = new Promise<void>((resolve) => {
    release = resolve;
  });
  // A listing that fails (no /proc, out of file handles) leaves the page to the trace.
  const listed = (): Set<number> | undefined => {
    try {
      return listRenderers();
    } catch (error) {
      logger.debug(`renderer lookup: the renderers could not be listed (${String(error)}); asking a trace`);
      return undefined;
    }
  };
  let page: Page;
  let appeared: number[] | undefined;
  try {
    await settleWithin(previous, CREATION_TURN_MS);
    const before = listed();
    page = await context.newPage();
    const after = before ? listed() : undefined;
    appeared = after && before ? [...after].filter((pid) => !before.has(pid)) : undefined;
  } finally {
    release();
  }
  if (appeared?.length === 1) return { page, renderers: { pids: appeared }, foundBy: "spawn" };
  if (appeared) logger.debug(`renderer lookup: ${appeared.length} renderers appeared with the page; asking a trace`);
  return { page, renderers: await lookUpRenderer(page, options.lookupMs), foundBy: "trace" };
}
