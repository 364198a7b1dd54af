/**
 * The state machine behind a SandboxedPage: alive → (torn down | closed). Every
 * call into the page is raced against its time limit and against the page dying, so
 * no caller waits on a renderer that will never answer.
 */
import { type Browser, type BrowserContext, errors, type Page } from "playwright";
import { type ErrorRecord, errorMessage, IwrError, toErrorRecord } from "../errors.ts";
import { log } from "../log/logger.ts";
import { type Settled, settleWithin } from "./deadline.ts";
import type { IncidentLog, PageIncident, PageIncidentKind } from "./incidents.ts";
import { openEntry } from "./open-entry.ts";
import { canWatchRendererMemory, rendererResidentMiB } from "./renderer-memory.ts";
import type { PageWatchHandlers } from "./sandbox-guards.ts";
import type { StaticServer } from "./static-server.ts";
import { forceCloseContext, type TargetIds } from "./teardown.ts";

const logger = log("browser");

/** How long after an unexpected page close the browser's own disconnect may still arrive. */
const UNEXPECTED_CLOSE_GRACE_MS = 300;

export interface SandboxedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** The entry's absolute URL. */
  readonly url: string;
  readonly server: StaticServer;
  readonly timeouts: Readonly<HostTimeouts>;
  /** Blocked requests, dialogs, popups, page errors, console errors, crash, timeouts, off-origin navigation. */
  readonly incidents: readonly PageIncident[];
  /** Exact number of incidents of each kind, also past the per-kind cap of `incidents`. */
  readonly incidentCounts: Readonly<Record<PageIncidentKind, number>>;
  /** Milliseconds since the page was opened, on the clock incidents' `atMs` use. */
  elapsedMs(): number;
  /** Set when the page could not be opened: timeout, crash, hostile behaviour, an HTTP error for the entry. */
  readonly loadError?: ErrorRecord;
  /** Set once the host tore the page down (hung, crashed, flood, over its memory limit, closed itself); every later call rejects with it. */
  readonly tornDown?: ErrorRecord;
  /** The page's memory as the host watched it: limit, the most its renderer held, or why it was not watched. */
  readonly memory: Readonly<PageMemoryRecord>;
  /** True while the page can still be used. */
  isAlive(): boolean;
  /** Viewport PNG within `timeouts.screenshotMs`. */
  screenshot(): Promise<Buffer>;
  /**
   * Runs `run` for at most `ms`. On timeout (ours or a Playwright TimeoutError) it records
   * a "timeout" incident, tears the page down if it no longer answers, and rejects with
   * IwrError("PAGE_TIMEOUT", details { label, ms, tornDown }). Once the page is torn down,
   * rejects with its `tornDown` error (code PAGE_TIMEOUT / PAGE_CRASHED / PAGE_HOSTILE / BROWSER).
   */
  withTimeout<T>(label: string, ms: number, run: () => Promise<T>): Promise<T>;
  /** Saves the trace, closes the context (and the owned server). Never hangs, never throws. */
  close(): Promise<void>;
}

export interface HostTimeouts {
  /** Opening the entry until its load event. */
  navigationMs: number;
  /** Default limit of Playwright actions (click, fill, locator waits) on the page. */
  actionMs: number;
  /** One viewport screenshot. */
  screenshotMs: number;
}

export interface HostLimits {
  rendererLookupMs: number;
  memoryPollMs: number;
  maxDialogs: number;
  maxPopups: number;
  maxRequests: number;
  maxIncidentsPerKind: number;
  probeMs: number;
  teardownStepMs: number;
  browserProbeMs: number;
  traceSaveMs: number;
  setupMs: number;
}

/** The page's memory as the host watched it. */
export interface PageMemoryRecord {
  limitMiB: number;
  /** The most the renderer held at any reading, in MiB (absent when unwatched). */
  peakResidentMiB?: number;
  /** Why the page ran without a limit (no /proc, the renderer's pid could not be learnt). */
  unwatched?: string;
  /** The renderer's pid came only after the page had opened: watched from this long after (ms); unwatched before. */
  watchedAfterMs?: number;
}

export interface HostedPageParts {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  server: StaticServer;
  ownsServer: boolean;
  url: string;
  timeouts: HostTimeouts;
  limits: HostLimits;
  incidents: IncidentLog;
  targets: TargetIds[];
  saveTrace?: (ms: number) => Promise<boolean>;
  /** The renderer(s) to watch; or, when the lookup outlasted its wait, `latePids` to watch once it answers. */
  memory: { limitMiB: number; rendererPids: readonly number[]; latePids?: Promise<number[]> };
}

type Raced<T> = Settled<T> | { status: "died" };

function isTimeout(error: unknown): boolean {
  return error instanceof errors.TimeoutError;
}

function firstLine(error: unknown): string {
  return errorMessage(error).split("\n")[0] ?? "";
}

export class HostedPage implements SandboxedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly url: string;
  readonly server: StaticServer;
  readonly timeouts: Readonly<HostTimeouts>;
  loadError?: ErrorRecord;
  tornDown?: ErrorRecord;

  private readonly parts: HostedPageParts;
  private tornDownError?: IwrError;
  private closing = false;
  private shutdown?: Promise<void>;
  private readonly died: Promise<{ status: "died" }>;
  private readonly death = new AbortController();
  private markDied: () => void = () => undefined;
  private readonly memoryRecord: PageMemoryRecord;
  private memoryTimer?: NodeJS.Timeout;

  constructor(parts: HostedPageParts) {
    this.parts = parts;
    this.page = parts.page;
    this.context = parts.context;
    this.url = parts.url;
    this.server = parts.server;
    this.timeouts = Object.freeze({ ...parts.timeouts });
    this.died = new Promise((resolve) => {
      this.markDied = () => {
        resolve({ status: "died" });
        // Waits raced against the death are over: their timers go with the page.
        this.death.abort();
      };
    });
    this.memoryRecord = { limitMiB: parts.memory.limitMiB };
    this.watchMemory();
  }

  get memory(): Readonly<PageMemoryRecord> {
    return this.memoryRecord;
  }

  /** Reads the renderer's resident memory every poll; past the limit the page is torn down through the browser (never by a signal). */
  private watchMemory(): void {
    const { rendererPids, latePids } = this.parts.memory;
    if (rendererPids.length > 0) {
      this.pollMemory(rendererPids);
      return;
    }
    if (!canWatchRendererMemory()) {
      this.runUnwatched("this machine has no /proc to read a process's memory from", "debug");
      return;
    }
    // Said aloud: on a machine that can watch, this page runs without its memory limit, for now or for good.
    if (!latePids) {
      this.runUnwatched("the renderer's process could not be found: its lookup timed out", "warn");
      return;
    }
    this.memoryRecord.unwatched = "the renderer's process could not be found: its lookup timed out";
    const opened = Date.now();
    logger.debug(`${this.url}: memory not watched yet: the renderer's lookup is slow; watched once it answers`);
    void latePids.then(
      (pids) => {
        if (this.closing || this.tornDownError || this.page.isClosed()) {
          this.runUnwatched("the page closed before its renderer's process was found (its lookup was slow)", "warn");
        } else if (pids.length === 0) {
          this.runUnwatched("the renderer's process could not be found: its lookup failed or was given up", "warn");
        } else {
          delete this.memoryRecord.unwatched;
          this.memoryRecord.watchedAfterMs = Date.now() - opened;
          logger.debug(`${this.url}: memory watched from ${this.memoryRecord.watchedAfterMs} ms after the page opened (its renderer's lookup was slow)`);
          this.pollMemory(pids);
        }
      },
      () => undefined,
    );
  }

  /** Records why the page runs without its memory limit, and says so. */
  private runUnwatched(reason: string, level: "debug" | "warn"): void {
    this.memoryRecord.unwatched = reason;
    logger[level](`${this.url}: memory not watched: ${reason}`);
  }

  private pollMemory(rendererPids: readonly number[]): void {
    const { limitMiB } = this.parts.memory;
    let previous: number | undefined;
    this.memoryTimer = setInterval(() => {
      const resident = rendererPids.reduce((sum, pid) => sum + (rendererResidentMiB(pid) ?? 0), 0);
      this.memoryRecord.peakResidentMiB = Math.max(this.memoryRecord.peakResidentMiB ?? 0, Math.round(resident));
      // Torn down once past the limit, or once it would be by the next two readings at its
      // present growth: a page filling memory at gigabytes a second must not overshoot by that much.
      const growth = previous === undefined ? 0 : Math.max(0, resident - previous);
      previous = resident;
      if (resident + 2 * growth <= limitMiB) return;
      this.stopMemoryWatch();
      void this.tearDown(
        new IwrError(
          "PAGE_MEMORY",
          `the page grew past its memory limit of ${limitMiB} MiB (${Math.round(resident)} MiB resident, ` +
            `growing ${Math.round(growth)} MiB a reading); it was torn down`,
          {
            reason: "memory",
            limitMiB,
            residentMiB: Math.round(resident),
          },
        ),
      );
    }, this.parts.limits.memoryPollMs);
    this.memoryTimer.unref();
  }

  private stopMemoryWatch(): void {
    if (this.memoryTimer) clearInterval(this.memoryTimer);
    this.memoryTimer = undefined;
  }

  get incidents(): readonly PageIncident[] {
    return this.parts.incidents.incidents;
  }

  get incidentCounts(): Readonly<Record<PageIncidentKind, number>> {
    return this.parts.incidents.counts;
  }

  elapsedMs(): number {
    return this.parts.incidents.elapsedMs();
  }

  isAlive(): boolean {
    return !this.tornDown && !this.closing;
  }

  watchHandlers(): PageWatchHandlers {
    const { maxDialogs, maxPopups } = this.parts.limits;
    return {
      onDialogFlood: (count) =>
        void this.tearDown(
          new IwrError("PAGE_HOSTILE", `the page showed more than ${maxDialogs} dialogs (an alert loop?); it was torn down`, {
            reason: "dialog-flood",
            count,
          }),
        ),
      onRequestFlood: (count) =>
        void this.tearDown(
          new IwrError("PAGE_HOSTILE", `the page made more than ${this.parts.limits.maxRequests} requests (a request loop?); it was torn down`, {
            reason: "request-flood",
            count,
          }),
        ),
      onPopupFlood: (count) =>
        void this.tearDown(
          new IwrError("PAGE_HOSTILE", `the page opened more than ${maxPopups} windows; it was torn down`, {
            reason: "popup-flood",
            count,
          }),
        ),
      onCrash: () => void this.tearDown(new IwrError("PAGE_CRASHED", "the page's renderer crashed; it was torn down")),
      onUnexpectedClose: () => {
        // A page closes before its browser reports the disconnect when the whole browser
        // goes: wait a moment, so a lost browser is not blamed on the page.
        setTimeout(
          () =>
            void this.tearDown(
              this.parts.browser.isConnected()
                ? new IwrError("PAGE_HOSTILE", "the page closed itself (window.close())", { reason: "closed-itself" })
                : new IwrError("BROWSER", "the browser went away while the page was open"),
            ),
          UNEXPECTED_CLOSE_GRACE_MS,
        );
      },
      isClosingOnPurpose: () => this.closing,
    };
  }

  /** Opens the entry. Never throws: failures become `loadError`, incidents and possibly a teardown. */
  async load(): Promise<void> {
    const { navigationMs } = this.timeouts;
    const opening = openEntry(this.context, this.page, this.url, navigationMs);
    const settled = await this.raceDeath(settleWithin(opening, navigationMs + this.parts.limits.probeMs, { cancel: this.death.signal }));
    if (this.tornDown) {
      this.loadError = this.tornDown;
      return;
    }
    if (settled.status === "done") {
      const { status } = settled.value;
      if (status !== undefined && (status < 200 || status > 299)) {
        this.loadError = toErrorRecord(new IwrError("BROWSER", `${this.url} answered HTTP ${status}`, { status }));
      }
      return;
    }
    if (settled.status === "failed" && !isTimeout(settled.error)) {
      this.loadError = toErrorRecord(new IwrError("BROWSER", `opening ${this.url} failed: ${firstLine(settled.error)}`));
      return;
    }
    this.parts.incidents.record("timeout", `loading ${this.url}: no load event within ${navigationMs} ms`);
    // Slow but alive (a resource that never finishes): keep it, as a browser would show it.
    if (await this.answers()) return;
    await this.tearDown(
      new IwrError("PAGE_TIMEOUT", `the page did not load within ${navigationMs} ms and stopped responding (a script that never yields?); it was torn down`, {
        label: "load",
        ms: navigationMs,
      }),
    );
    this.loadError = this.tornDown;
  }

  screenshot(): Promise<Buffer> {
    const ms = this.timeouts.screenshotMs;
    return this.withTimeout("screenshot", ms, () => this.page.screenshot({ type: "png", timeout: ms }));
  }

  async withTimeout<T>(label: string, ms: number, run: () => Promise<T>): Promise<T> {
    this.throwIfUnusable();
    const settled = await this.raceDeath(settleWithin(Promise.resolve().then(run), ms, { cancel: this.death.signal }));
    if (settled.status === "done") return settled.value;
    this.throwIfUnusable();
    if (settled.status === "failed" && !isTimeout(settled.error)) throw settled.error;
    this.parts.incidents.record("timeout", `${label} did not finish within ${ms} ms`);
    const alive = await this.answers();
    if (!alive) {
      await this.tearDown(
        new IwrError("PAGE_TIMEOUT", `${label} did not finish within ${ms} ms and the page stopped responding; it was torn down`, {
          label,
          ms,
        }),
      );
    }
    throw new IwrError(
      "PAGE_TIMEOUT",
      `${label} did not finish within ${ms} ms${alive ? "" : "; the page stopped responding and was torn down"}`,
      { label, ms, tornDown: !alive },
      { cause: settled.status === "failed" ? settled.error : undefined },
    );
  }

  close(): Promise<void> {
    if (!this.shutdown) {
      this.markDied();
      this.shutdown = this.shutDown();
    }
    return this.shutdown;
  }

  private throwIfUnusable(): void {
    if (this.tornDownError) throw this.tornDownError;
    if (this.closing) throw new IwrError("BROWSER", `the page ${this.url} was already closed`);
  }

  private raceDeath<T>(work: Promise<Settled<T>>): Promise<Raced<T>> {
    return Promise.race<Raced<T>>([work, this.died]);
  }

  /** Whether the page's renderer still answers a trivial script in time. */
  private async answers(): Promise<boolean> {
    if (this.tornDown || this.page.isClosed()) return false;
    const probe = await settleWithin(this.page.evaluate("1 + 1"), this.parts.limits.probeMs);
    return probe.status === "done";
  }

  private tearDown(error: IwrError): Promise<void> {
    if (this.shutdown) return this.shutdown;
    this.tornDownError = error;
    this.tornDown = toErrorRecord(error);
    logger.warn(`tearing down ${this.url}: ${error.message}`);
    this.markDied();
    this.shutdown = this.shutDown();
    return this.shutdown;
  }

  /** Runs once: trace, context, owned server; each step bounded, nothing thrown. */
  private async shutDown(): Promise<void> {
    this.closing = true;
    this.stopMemoryWatch();
    const { limits, saveTrace, browser, context, targets, server, ownsServer } = this.parts;
    try {
      // A hung page's trace gets one short attempt; a healthy page's trace the full time.
      if (saveTrace) await saveTrace(this.tornDown ? limits.teardownStepMs : limits.traceSaveMs).catch(() => false);
      const outcome = await forceCloseContext(browser, context, targets, { stepMs: limits.teardownStepMs, browserProbeMs: limits.browserProbeMs });
      if (outcome !== "context-closed") logger.warn(`closed ${this.url} by escalation: ${outcome}`);
      if (ownsServer) await settleWithin(server.close(), limits.teardownStepMs);
    } catch (error) {
      logger.warn(`closing ${this.url}: ${errorMessage(error)}`);
    }
  }
}
