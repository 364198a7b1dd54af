/**
 * Replaying actions on a candidate folder in the sandboxed host: stage a private copy
 * of its page files, open it at the task's resolution with only its own files and the
 * task's assets reachable, replay, publish the screenshots, close. The evaluator (true
 * trajectory) and the self-check (inferred actions) both go through here.
 *
 * The page slot (at most N pages opening or replaying at once) is held from opening the
 * page to the end of its replay only: the trace save and the context close run after it,
 * so the next replay can start while they finish.
 */
import fs from "node:fs/promises";
import type { Page } from "playwright";
import type { Determinism } from "../browser/determinism.ts";
import { type HostTimeouts, openSandboxedPage, type PageIncident, type PageMemoryRecord, type Resolution } from "../browser/host.ts";
import type { Scrollbars } from "../browser/launch.ts";
import type { ScreenText } from "../browser/screen-text.ts";
import type { ErrorRecord } from "../errors.ts";
import { tempPathBeside } from "../files/atomic.ts";
import { RESULT_FILES } from "../results/layout.ts";
import { candidateMounts, confinedAssetsDir, stageCandidate } from "./candidate-serving.ts";
import type { Grounder } from "./grounding/types.ts";
import { type ReplayAction, type ReplayResult, type ReplayStyle, replayTrajectory } from "./replay.ts";

/** Runs `open` when a page slot is free, holding it until `open` settles. */
export type PageSlots = <T>(open: () => Promise<T>) => Promise<T>;

export interface HostedReplayOptions {
  /** The candidate's folder (index.html and any files beside it). */
  candidateDir: string;
  /** The task's assets folder, served where the page's relative asset links point. */
  assetsDir: string;
  /** The task set's folder: the assets must resolve inside it (symbolic links included). */
  confineAssetsTo: string;
  resolution: Resolution;
  actions: readonly ReplayAction[];
  grounder: Grounder;
  /** Final folder of `<i>.png`; the new screenshots replace it as a whole when the replay ends. */
  screenshotsDir: string;
  /** Called as each screenshot is taken (judging and OCR start during the settle waits), with the screen text when asked for. */
  onScreenshot?: (index: number, png: Buffer, text?: ScreenText) => void;
  /** Read each screen's text from the page too (see ReplayOptions.readScreenText). */
  readScreenText?: boolean;
  /** Reads the page after each screenshot (see ReplayOptions.probe). */
  probe?: (index: number, page: Page) => Promise<void>;
  /** How steps cite their screenshots (default `evalpoints/<i>.png`). */
  screenshotLabel?: (index: number) => string;
  tracePath?: string;
  hostTimeouts?: Partial<HostTimeouts>;
  /** The page's memory limit in MiB (the host's default when absent). */
  memoryLimitMiB?: number;
  pageSlots?: PageSlots;
  /** Timings and action semantics of the replay (default ours). */
  style?: ReplayStyle;
  /** Chromium's scrollbars (default hidden; the official profile shows them, as the harness's browser does). */
  scrollbars?: Scrollbars;
  /**
   * Replay in deterministic mode (seeded Math.random, fixed clock start), as the task was
   * recorded; with its `steppedClock`, under the stepped clock advanced as the recording's was.
   */
  determinism?: Determinism;
}

/** What the host saw of the page, complete once it closed. */
export interface HostedPageRecord {
  url?: string;
  loadError?: ErrorRecord;
  tornDown?: ErrorRecord;
  incidents: PageIncident[];
  incidentCounts?: Record<string, number>;
  memory?: PageMemoryRecord;
}

export interface HostedReplay {
  replay: ReplayResult;
  /** Settles once the page closed (trace saved, context closed, staged copy removed). Never rejects. */
  closed: Promise<HostedPageRecord & { closeMs: number }>;
  timings: { slotWaitMs: number; openMs: number; replayMs: number };
}

const EMPTY_REPLAY: ReplayResult = { executed: 0, steps: [], evalpoints: [] };

/** Swaps the new screenshots in for any earlier ones (a shorter replay must not leave stale files behind). */
async function publishScreenshots(finalDir: string, stagingDir: string): Promise<void> {
  await fs.mkdir(stagingDir, { recursive: true });
  await fs.rm(finalDir, { recursive: true, force: true });
  await fs.rename(stagingDir, finalDir);
}

/**
 * Replays `actions` on the candidate. A page that cannot be opened, hangs or crashes is
 * a result (`replay.error`, `loadError`, `tornDown`), not an exception; only a browser or
 * server that cannot start, or a refused assets folder, throws.
 */
export async function replayHostedCandidate(options: HostedReplayOptions): Promise<HostedReplay> {
  const timings = { slotWaitMs: 0, openMs: 0, replayMs: 0 };
  let mark = Date.now();
  const lap = (): number => {
    const now = Date.now();
    const elapsed = now - mark;
    mark = now;
    return elapsed;
  };
  const assetsDir = confinedAssetsDir(options.assetsDir, options.confineAssetsTo);
  const stagingDir = tempPathBeside(options.screenshotsDir);
  const inPageSlot = options.pageSlots ?? (<T>(work: () => Promise<T>) => work());
  const { replay, closed } = await inPageSlot(async () => {
    timings.slotWaitMs = lap();
    const servedDir = await stageCandidate(options.candidateDir);
    const removeServed = () => fs.rm(servedDir, { recursive: true, force: true });
    const sandbox = await openSandboxedPage({
      mounts: candidateMounts(options.candidateDir, assetsDir, servedDir),
      entry: RESULT_FILES.page,
      resolution: options.resolution,
      ...(options.tracePath ? { tracePath: options.tracePath } : {}),
      ...(options.hostTimeouts ? { timeouts: options.hostTimeouts } : {}),
      ...(options.memoryLimitMiB ? { memoryLimitMiB: options.memoryLimitMiB } : {}),
      ...(options.scrollbars ? { scrollbars: options.scrollbars } : {}),
      ...(options.determinism ? { determinism: options.determinism } : {}),
    }).catch(async (error: unknown) => {
      await removeServed();
      throw error;
    });
    timings.openMs = lap();
    const closePage = () => {
      const closeStarted = Date.now();
      return sandbox
        .close()
        .then(removeServed)
        .catch(() => undefined)
        .then(() => ({
          url: sandbox.url,
          ...(sandbox.loadError ? { loadError: sandbox.loadError } : {}),
          ...(sandbox.tornDown ? { tornDown: sandbox.tornDown } : {}),
          incidents: [...sandbox.incidents],
          incidentCounts: { ...sandbox.incidentCounts },
          memory: { ...sandbox.memory },
          closeMs: Date.now() - closeStarted,
        }));
    };
    let replay: ReplayResult = EMPTY_REPLAY;
    try {
      if (sandbox.loadError) {
        replay = { ...EMPTY_REPLAY, error: sandbox.loadError };
      } else {
        const ownPrefix = `${sandbox.server.origin}/`;
        replay = await replayTrajectory({
          surface: {
            page: sandbox.page,
            screenshot: () => sandbox.screenshot(),
            withTimeout: (label, ms, run) => sandbox.withTimeout(label, ms, run),
            leftTo: () => {
              const url = sandbox.page.url();
              return url.startsWith(ownPrefix) ? undefined : url;
            },
            elapsedMs: () => sandbox.elapsedMs(),
          },
          actions: options.actions,
          grounder: options.grounder,
          evalpointsDir: stagingDir,
          ...(options.style ? { style: options.style } : {}),
          ...(options.onScreenshot ? { onEvalpoint: options.onScreenshot } : {}),
          ...(options.readScreenText ? { readScreenText: true } : {}),
          ...(options.probe ? { probe: options.probe } : {}),
          ...(options.screenshotLabel ? { screenshotLabel: options.screenshotLabel } : {}),
          ...(options.determinism?.steppedClock ? { steppedClock: options.determinism.steppedClock } : {}),
        });
      }
    } catch (error) {
      // The replay engine itself broke (not the page): an evaluator failure, after the page is closed.
      await closePage();
      await fs.rm(stagingDir, { recursive: true, force: true });
      throw error;
    }
    timings.replayMs = lap();
    // Saving the trace and closing the context need nothing more from the replay: they run
    // after the slot is freed, and the record is complete once they settle.
    return { replay, closed: closePage() };
  });
  try {
    await publishScreenshots(options.screenshotsDir, stagingDir);
  } catch (error) {
    await fs.rm(stagingDir, { recursive: true, force: true });
    throw error;
  }
  return { replay, closed, timings };
}
