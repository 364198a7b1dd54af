/**
 * How much memory one page's renderer process holds, so the host can tear a page down
 * that grows past its limit (an ArrayBuffer bomb, a wall of 16k × 16k canvases) before
 * the kernel's OOM killer picks a victim, possibly another task's page or the browser.
 *
 * Each Playwright context's page has a renderer process of its own (never shared across
 * contexts). Which pid it is, CDP says only in a trace: the TracingStartedInBrowser event
 * lists the page's frames with their processId. The trace is taken at about:blank, right
 * after the page is created and before any of its scripts run (tracing a page that is
 * stuck in a loop does not finish), and one trace at a time (Chromium runs one only).
 * Memory is read from /proc/<pid>/statm (resident pages), which costs next to nothing.
 */
import fs from "node:fs";
import os from "node:os";
import type { Page } from "playwright";
import { settleWithin } from "./deadline.ts";

/** Lookups run one after another: a second Tracing.start while one runs comes back empty. */
let lookups: Promise<unknown> = Promise.resolve();

interface TraceEvent {
  name?: string;
  args?: { data?: { frames?: Array<{ processId?: number }> } };
}

async function traceRendererPids(page: Page): Promise<number[]> {
  const session = await page.context().newCDPSession(page);
  try {
    const events: TraceEvent[] = [];
    session.on("Tracing.dataCollected", (event) => events.push(...(event.value as TraceEvent[])));
    const complete = new Promise((resolve) => session.once("Tracing.tracingComplete", resolve));
    await session.send("Tracing.start", { traceConfig: { includedCategories: ["disabled-by-default-devtools.timeline"] }, transferMode: "ReportEvents" });
    await session.send("Tracing.end");
    await complete;
    const frames = events.find((event) => event.name === "TracingStartedInBrowser")?.args?.data?.frames ?? [];
    return [...new Set(frames.flatMap((frame) => (frame.processId ? [frame.processId] : [])))];
  } finally {
    await session.detach().catch(() => undefined);
  }
}

/** The pids of the renderer(s) serving `page`, or [] when they could not be learnt within `ms`. */
export function rendererPids(page: Page, ms: number): Promise<number[]> {
  const turn = lookups.then(async () => {
    const settled = await settleWithin(traceRendererPids(page), ms);
    return settled.status === "done" ? settled.value : [];
  });
  lookups = turn.catch(() => undefined);
  return turn;
}

const PAGE_BYTES = 4096;

/**
 * Resident memory of a renderer in MiB, or undefined once it is gone (or the pid now
 * belongs to another program: Chromium rewrites its children's command lines, but a
 * renderer's still says --type=renderer).
 */
export function rendererResidentMiB(pid: number): number | undefined {
  try {
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer")) return undefined;
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
