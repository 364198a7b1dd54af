/**
 * The sandboxed page host: opens one untrusted page (a generated candidate, a
 * reference site) in a fresh context of the process's shared Chromium, at the task's
 * resolution, with the network fenced to its own 127.0.0.1 server, and makes sure
 * that whatever the page does — loop forever, alert in a loop, open windows, crash —
 * every call returns within its time limit and `close()` always finishes. What the page
 * did is kept as incidents; the next task gets a working browser either way.
 */
import type { Browser, BrowserContext, Page } from "playwright";
import { IwrError, toErrorRecord } from "../errors.ts";
import { log } from "../log/logger.ts";
import { MAX_VIEWPORT_SIDE, PROTOCOL } from "../protocol.ts";
import { settleWithin } from "./deadline.ts";
import { type Determinism, installDeterminism } from "./determinism.ts";
import { readTargetIds, saveTrace } from "./host-support.ts";
import { HostedPage, type HostLimits, type HostTimeouts, type SandboxedPage } from "./hosted-page.ts";
import { IncidentLog } from "./incidents.ts";
import { closeSharedBrowser, type Scrollbars, sharedBrowser } from "./launch.ts";
import { canWatchRendererMemory, defaultPageMemoryLimitMiB, type RendererLookup } from "./renderer-memory.ts";
import { newPageWithRenderer } from "./renderer-spawn.ts";
import { deadEndProxy, installNetworkGuards, watchPage } from "./sandbox-guards.ts";
import { type Mount, type StaticServer, startStaticServer } from "./static-server.ts";
import { browserAnswers, type TargetIds } from "./teardown.ts";

export type { HostLimits, HostTimeouts, PageMemoryRecord, SandboxedPage } from "./hosted-page.ts";
export type { PageIncident, PageIncidentKind } from "./incidents.ts";
export { defaultPageMemoryLimitMiB } from "./renderer-memory.ts";
export type { Mount, StaticServer } from "./static-server.ts";

const logger = log("browser");

export const DEFAULT_HOST_TIMEOUTS: Readonly<HostTimeouts> = Object.freeze({
  navigationMs: 30_000,
  actionMs: PROTOCOL.actionTimeoutMs,
  screenshotMs: 10_000,
});

export const HOST_LIMITS: Readonly<HostLimits> = Object.freeze({
  /** A page showing more dialogs than this is torn down (an alert loop never lets the page settle). */
  maxDialogs: 20,
  /** A page opening more windows than this is torn down. */
  maxPopups: 20,
  /**
   * A page making more requests than this is torn down (fetch in a loop): a real page
   * loads tens to a few hundred files, and every request, even a blocked one, costs the
   * browser and this process work that other pages wait behind.
   */
  maxRequests: 2000,
  /** Incidents of one kind kept in full; later ones are only counted. */
  maxIncidentsPerKind: 100,
  /** How long a page gets to answer `1 + 1` before it is judged hung. */
  probeMs: 1_000,
  /** Each teardown step (close context, close targets, drop browser) gets this long. */
  teardownStepMs: 3_000,
  /**
   * How long the shared browser gets to answer a browser-level command before it is judged
   * hung and replaced. Replacing it fails every other task's page in flight, and under load
   * a busy browser once took over 3 s to answer, so it gets far longer than a teardown step.
   */
  browserProbeMs: 15_000,
  /** Writing the trace zip on close. */
  traceSaveMs: 15_000,
  /** Launching (if needed) the browser and opening a blank page in a new context. */
  setupMs: 30_000,
  /**
   * Learning the page's renderer pid by a short CDP trace at about:blank, when the renderers
   * that appeared with the page do not name it (renderer-spawn.ts). A page whose pid is
   * not learnt runs without its memory limit, so this gets as long as the browser probe: the
   * trace took up to 1.4 s on an idle 2-core machine and 2.2 s beside six busy processes, and
   * beside two other long test files a 3 s bound once left a canvas bomb unwatched.
   */
  rendererLookupMs: 15_000,
  /** How often the renderer's resident memory is read. */
  memoryPollMs: 250,
});

export interface Resolution {
  width: number;
  height: number;
}

export interface OpenSandboxedPageOptions {
  /** A server already running (not closed by the page); or else `root` / `mounts` to start one owned by the page. */
  server?: StaticServer;
  root?: string;
  mounts?: Mount[];
  /** Path under the server, e.g. "index.html" or "tasks/x/index.html". */
  entry: string;
  resolution: Resolution;
  timeouts?: Partial<HostTimeouts>;
  /** Save a Playwright trace (DOM snapshots of every action, no screencast) there on close, written atomically. */
  tracePath?: string;
  /**
   * Memory the page's renderer may hold, in MiB; past it the page is torn down with
   * PAGE_MEMORY within about a second. Default: defaultPageMemoryLimitMiB(1).
   */
  memoryLimitMiB?: number;
  /** Chromium's scrollbars (default hidden); each setting has its own shared browser. */
  scrollbars?: Scrollbars;
  /** Seeded Math.random and a fixed clock start, installed before the page's first script (deterministic mode). */
  determinism?: Determinism;
}

function checkResolution(resolution: Resolution): void {
  for (const side of ["width", "height"] as const) {
    const value = resolution[side];
    if (!Number.isInteger(value) || value < 1 || value > MAX_VIEWPORT_SIDE) {
      throw new IwrError("BROWSER", `openSandboxedPage: resolution.${side}: expected an integer 1..${MAX_VIEWPORT_SIDE}, got ${String(value)}`);
    }
  }
}

async function serverFor(options: OpenSandboxedPageOptions): Promise<{ server: StaticServer; owned: boolean }> {
  const given = [options.server, options.root, options.mounts].filter((source) => source !== undefined).length;
  if (given !== 1) {
    throw new IwrError("BROWSER", `openSandboxedPage: expected exactly one of server, root or mounts, got ${given}`);
  }
  if (options.server) return { server: options.server, owned: false };
  return { server: await startStaticServer(options.root ?? { mounts: options.mounts ?? [] }), owned: true };
}

async function newSandboxContext(browser: Browser, origin: string, resolution: Resolution): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { ...resolution },
    screen: { ...resolution },
    deviceScaleFactor: 1,
    isMobile: false,
    hasTouch: false,
    serviceWorkers: "block",
    acceptDownloads: false,
    proxy: deadEndProxy(origin),
    // Recording and replay may run on different machines: pin what pages can read.
    locale: "en-US",
    timezoneId: "UTC",
    colorScheme: "light",
  });
}

interface PageShell {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  targets: TargetIds[];
  /** The renderer(s) serving the page, or the lookup still under way (then watched once it answers). */
  renderers: RendererLookup;
}

/** Browser, fenced context and a blank page, ready to navigate. */
async function startPageShell(
  server: StaticServer,
  resolution: Resolution,
  timeouts: HostTimeouts,
  incidents: IncidentLog,
  tracing: boolean,
  scrollbars: Scrollbars,
  determinism: Determinism | undefined,
): Promise<PageShell> {
  const browser = await sharedBrowser(scrollbars);
  const context = await newSandboxContext(browser, server.origin, resolution);
  try {
    context.setDefaultTimeout(timeouts.actionMs);
    context.setDefaultNavigationTimeout(timeouts.navigationMs);
    // DOM snapshots around every action are what show-trace replays; the screencast
    // filmstrip would cost a JPEG per painted frame for pictures the evalpoints already keep.
    if (tracing) await context.tracing.start({ screenshots: false, snapshots: true });
    await installNetworkGuards(context, server.origin, incidents);
    if (determinism) await installDeterminism(context, determinism, determinism.steppedClock ? "stepped" : "shifted");
    // The renderer is found at about:blank, before any of the page's own scripts can keep it busy.
    const { page, renderers, foundBy } = canWatchRendererMemory()
      ? await newPageWithRenderer(context, { lookupMs: HOST_LIMITS.rendererLookupMs })
      : { page: await context.newPage(), renderers: { pids: [] }, foundBy: "not looked up" };
    logger.debug(`page opened: renderer ${renderers.pids.join(", ") || "not known yet"} (${foundBy})`);
    const targets = await readTargetIds(context, page);
    return { browser, context, page, targets, renderers };
  } catch (error) {
    await context.close().catch(() => undefined);
    throw error;
  }
}

/** Opens `entry` in a fenced, fresh context. Page failures land in `loadError`; it throws only when the browser or server cannot start. */
export async function openSandboxedPage(options: OpenSandboxedPageOptions): Promise<SandboxedPage> {
  checkResolution(options.resolution);
  const timeouts: HostTimeouts = { ...DEFAULT_HOST_TIMEOUTS, ...options.timeouts };
  const { server, owned } = await serverFor(options);
  const incidents = new IncidentLog(HOST_LIMITS.maxIncidentsPerKind);
  const { tracePath } = options;
  const scrollbars = options.scrollbars ?? "hidden";
  const starting = startPageShell(server, options.resolution, timeouts, incidents, tracePath !== undefined, scrollbars, options.determinism);
  const started = await settleWithin(starting, HOST_LIMITS.setupMs);
  if (started.status !== "done") {
    if (owned) await server.close();
    if (started.status === "failed") {
      throw new IwrError("BROWSER", `could not open a page: ${toErrorRecord(started.error).message}`, {}, { cause: started.error });
    }
    void starting.then((shell) => shell.context.close()).catch(() => undefined);
    // Only a browser that no longer answers is wedged and replaced: other tasks' pages live on it.
    const browser = await settleWithin(sharedBrowser(scrollbars), HOST_LIMITS.teardownStepMs);
    if (browser.status === "done" && (await browserAnswers(browser.value, HOST_LIMITS.browserProbeMs))) {
      throw new IwrError("BROWSER", `opening a blank page took over ${HOST_LIMITS.setupMs} ms (the browser answers; this task fails, the others go on)`, {
        reason: "slow-setup",
        ms: HOST_LIMITS.setupMs,
      });
    }
    await settleWithin(closeSharedBrowser(scrollbars), HOST_LIMITS.teardownStepMs);
    throw new IwrError("BROWSER", `opening a blank page took over ${HOST_LIMITS.setupMs} ms and the browser does not answer; it was replaced`);
  }
  const { browser, context, page, targets, renderers } = started.value;
  const hosted = new HostedPage({
    browser,
    context,
    page,
    server,
    ownsServer: owned,
    url: server.url(options.entry),
    timeouts,
    limits: HOST_LIMITS,
    incidents,
    targets,
    saveTrace: tracePath ? (ms) => saveTrace(context, tracePath, ms) : undefined,
    memory: {
      limitMiB: options.memoryLimitMiB ?? defaultPageMemoryLimitMiB(1),
      rendererPids: renderers.pids,
      ...(renderers.latePids ? { latePids: renderers.latePids } : {}),
    },
  });
  watchPage(context, page, server.origin, incidents, HOST_LIMITS, hosted.watchHandlers());
  await hosted.load();
  return hosted;
}
