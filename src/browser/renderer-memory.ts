/**
 * How much memory one page's renderer process holds, so the host can tear a page down
 * that grows past its limit (an ArrayBuffer bomb, a wall of 16k × 16k canvases) before
 * the kernel's OOM killer picks a victim, possibly another task's page or the browser.
 *
 * Each Playwright context's page has a renderer process of its own (never shared across
 * contexts). Most pages' renderer is the one that appeared while the page was created
 * (renderer-spawn.ts). When that is ambiguous, the renderer is asked of CDP, which names
 * it only in a trace: the TracingStartedInBrowser event
 * lists the page's frames with their processId. The trace is asked for at about:blank,
 * right after the page is created and before any of its scripts run (tracing a page that
 * is stuck in a loop does not finish), and one trace at a time (Chromium runs one only).
 * A trace is browser-wide: a renderer slow to answer it (a starved machine, another page's
 * long task) slows every page's lookup. The page waits for its answer only so long; a
 * slower answer is handed over to watch the page from then on (`latePids`), and a trace
 * whose turn comes once its page has started running may not finish at all, so each is
 * given up after a bound and its session detached, which ends it.
 * Memory is read from /proc/<pid>/statm (resident pages), which costs next to nothing.
 */
import fs from "node:fs";
import os from "node:os";
import type { CDPSession, Page } from "playwright";
import { processGone } from "../files/process-table.ts";
import { log } from "../log/logger.ts";
import { settleWithin } from "./deadline.ts";

const logger = log("browser");

/**
 * Lookups run one after another: a second Tracing.start while one runs comes back empty.
 * The next one starts when the previous trace has ended or been given up (its session
 * detached), not when its caller stopped waiting.
 */
let lookups: Promise<unknown> = Promise.resolve();
/** How long a trace may take before it is given up (its page then runs unwatched). */
const TRACE_GIVE_UP_MS = 60_000;
/** How long detaching a trace's session may take (a stalled browser must not hold the lookups). */
const DETACH_MS = 5_000;

interface TraceEvent {
  name?: string;
  args?: { data?: { frames?: Array<{ processId?: number }> } };
}

/** The renderer pids a trace over `session` names (its TracingStartedInBrowser event). */
async function readTrace(session: CDPSession): Promise<number[]> {
  const events: TraceEvent[] = [];
  session.on("Tracing.dataCollected", (event) => events.push(...(event.value as TraceEvent[])));
  const complete = new Promise((resolve) => session.once("Tracing.tracingComplete", resolve));
  await session.send("Tracing.start", { traceConfig: { includedCategories: ["disabled-by-default-devtools.timeline"] }, transferMode: "ReportEvents" });
  await session.send("Tracing.end");
  await complete;
  const frames = events.find((event) => event.name === "TracingStartedInBrowser")?.args?.data?.frames ?? [];
  return [...new Set(frames.flatMap((frame) => (frame.processId ? [frame.processId] : [])))];
}

/** A trace's answer, or [] when it fails, its page closes or it runs past `giveUpMs`. */
async function traceRendererPids(page: Page, giveUpMs: number): Promise<number[]> {
  if (page.isClosed()) return [];
  const closed = new AbortController();
  const onClose = () => closed.abort();
  page.once("close", onClose);
  const opening = page.context().newCDPSession(page);
  try {
    const traced = await settleWithin(opening.then(readTrace), giveUpMs, { cancel: closed.signal });
    return traced.status === "done" ? traced.value : [];
  } finally {
    page.off("close", onClose);
    // Detaching ends a trace still running (or lets go of a session that opened late), so the next lookup's is not started beside it.
    await settleWithin(
      opening.then((session) => session.detach()),
      DETACH_MS,
    );
  }
}

/** What a lookup learnt within its caller's wait: the pids, or the pids to come. */
export interface RendererLookup {
  /** The renderer(s) serving the page; empty when not learnt within the wait. */
  pids: number[];
  /** Present when the wait ran out first: the trace's answer when it ends ([] when it fails, its page closes or it is given up). */
  latePids?: Promise<number[]>;
}

/** The renderer(s) serving `page`: learnt within `ms` of asking, or handed over as `latePids`. */
export async function lookUpRenderer(page: Page, ms: number, options: { giveUpMs?: number } = {}): Promise<RendererLookup> {
  const asked = Date.now();
  const traced = lookups.then(async () => {
    const started = Date.now();
    const pids = await traceRendererPids(page, options.giveUpMs ?? TRACE_GIVE_UP_MS).catch((): number[] => []);
    logger.debug(`renderer lookup: waited ${started - asked} ms for its turn, traced for ${Date.now() - started} ms (${pids.length} pid(s))`);
    return pids;
  });
  lookups = traced.catch(() => undefined);
  const within = await settleWithin(traced, ms);
  return within.status === "done" ? { pids: within.value } : { pids: [], latePids: traced };
}

const PAGE_BYTES = 4096;

/**
 * Whether `pid` is a Chromium renderer: Chromium rewrites its children's command lines
 * (spaces, not NULs), but a renderer's still says its type. False once it has ended; any
 * other failure to read throws.
 */
export function isRendererProcess(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer");
  } catch (error) {
    if (processGone(error)) return false;
    throw error;
  }
}

/**
 * Resident memory of a renderer in MiB, or undefined once it is gone (or the pid now
 * belongs to a process that is not a renderer).
 */
export function rendererResidentMiB(pid: number): number | undefined {
  try {
    if (!isRendererProcess(pid)) return undefined;
    const resident = Number(fs.readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
    return Number.isFinite(resident) ? (resident * PAGE_BYTES) / 2 ** 20 : undefined;
  } catch {
    return undefined;
  }
}

/** Whether this machine lets us read process memory (Linux /proc); elsewhere pages run without a limit. */
export function canWatchRendererMemory(): boolean {
  return fs.existsSync(`/proc/${process.pid}/statm`);
}

/**
 * The default memory limit of one page: what a page may hold while `workers` pages run
 * at once, leaving this process and the browser room — 60 % of the machine's memory
 * shared by the workers and one more (the process itself), at most 4 GiB (far above any
 * real page) and at least 512 MiB. `IWR_PAGE_MEMORY_MB` sets it outright.
 */
export function defaultPageMemoryLimitMiB(workers: number, env: NodeJS.ProcessEnv = process.env, totalBytes = os.totalmem()): number {
  const fromEnv = Number(env.IWR_PAGE_MEMORY_MB);
  if (env.IWR_PAGE_MEMORY_MB !== undefined && Number.isFinite(fromEnv) && fromEnv > 0) return Math.round(fromEnv);
  const share = ((totalBytes / 2 ** 20) * 0.6) / (Math.max(1, workers) + 1);
  return Math.round(Math.min(4096, Math.max(512, share)));
}
