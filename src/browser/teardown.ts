/**
 * Closing a browser context that may hold a hung or crashed page, in a bounded time.
 *
 * A page stuck in `while (true) {}` blocks its renderer, so anything that needs the
 * renderer's answer waits forever. Closing the whole context is done by the browser
 * process and normally finishes in ~0.1 s even then; when it does not, the targets are
 * closed and the context disposed through a browser-level CDP session. The shared
 * browser is dropped only when the browser itself no longer answers: other tasks have
 * pages open on it, and one page's trouble must not fail them. A browser that answers
 * keeps running and the stuck context is left behind (logged), to go with the browser.
 */
import type { Browser, BrowserContext } from "playwright";
import { errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";
import { settleWithin } from "./deadline.ts";
import { closeSharedBrowser } from "./launch.ts";

const logger = log("browser");

/** CDP identifiers of a page, read while it was still responsive. */
export interface TargetIds {
  targetId: string;
  browserContextId?: string;
}

export type TeardownOutcome = "context-closed" | "targets-closed" | "abandoned" | "browser-dropped";

/** Whether the browser process still answers a browser-level command within `ms`. */
export async function browserAnswers(browser: Browser, ms: number): Promise<boolean> {
  if (!browser.isConnected()) return false;
  const asked = (async () => {
    const session = await browser.newBrowserCDPSession();
    try {
      await session.send("Browser.getVersion");
    } finally {
      await session.detach().catch(() => undefined);
    }
  })();
  return (await settleWithin(asked, ms)).status === "done";
}

/** Closes the targets and disposes their browser contexts from the browser side; true when done within `ms`. */
export async function closeTargetsThroughCdp(browser: Browser, targets: readonly TargetIds[], ms: number): Promise<boolean> {
  if (targets.length === 0) return false;
  const work = (async () => {
    const session = await browser.newBrowserCDPSession();
    try {
      for (const target of targets) {
        await session.send("Target.closeTarget", { targetId: target.targetId }).catch(() => undefined);
      }
      const contextIds = new Set(targets.flatMap((target) => (target.browserContextId ? [target.browserContextId] : [])));
      for (const browserContextId of contextIds) {
        await session.send("Target.disposeBrowserContext", { browserContextId });
      }
    } finally {
      await session.detach().catch(() => undefined);
    }
  })();
  const settled = await settleWithin(work, ms);
  return settled.status === "done";
}

export interface TeardownBounds {
  /** Closing the context, then closing its targets through CDP, each gets this long. */
  stepMs: number;
  /**
   * How long the browser gets to answer before it is judged hung and dropped. Longer than
   * a step: dropping it fails every other page open on it, and a browser that is only busy
   * (its connection full of another page's events, a loaded machine) answers late, not never.
   */
  browserProbeMs: number;
}

/**
 * Closes `context` within about 3 × `stepMs` + `browserProbeMs` (the browser dropped last), escalating as described above.
 * Never throws; says which step finished the job.
 */
export async function forceCloseContext(
  browser: Browser,
  context: BrowserContext,
  targets: readonly TargetIds[],
  { stepMs, browserProbeMs }: TeardownBounds,
): Promise<TeardownOutcome> {
  const closed = await settleWithin(context.close(), stepMs);
  if (closed.status === "done") return "context-closed";
  logger.warn(
    `closing a page's context ` +
      `${closed.status === "failed" ? `failed (${errorMessage(closed.error)})` : `took over ${stepMs} ms`}; closing its targets through CDP`,
  );
  if (browser.isConnected() && (await closeTargetsThroughCdp(browser, targets, stepMs))) return "targets-closed";
  if (await browserAnswers(browser, browserProbeMs)) {
    logger.warn("the page's targets could not be closed, but the browser answers: the context is left behind so the other tasks' pages keep running");
    return "abandoned";
  }
  logger.warn("the page's targets could not be closed and the browser does not answer; dropping it so the next task gets a fresh one");
  await settleWithin(closeSharedBrowser(), stepMs);
  return "browser-dropped";
}
