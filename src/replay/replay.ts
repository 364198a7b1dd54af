/**
 * Replaying a list of actions on a candidate page (docs/protocol.md §3.1–§3.2):
 * settle, evalpoint 0, then each action in order (grounded, executed within the
 * action limit), settle, evalpoint i; the first failing action ends the replay.
 *
 * One engine, two callers: the evaluator replays the task's true trajectory, the
 * self-check replays actions the agent inferred from the video. The actions are plain
 * `ReplayAction`s (type, target description, text or key), so nothing here needs a
 * task's truth.
 *
 * The page is opened by the caller (the sandboxed host); this module only needs a
 * page, a time-limited screenshot and a way to time-limit a page call, so the same
 * loop runs on any surface that offers those three.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright";
import { readScreenText, type ScreenText } from "../browser/screen-text.ts";
import { atRestTimings, RequestsInFlight, readPageActivity, type SettleProbe, type SettleRecord, waitUntilAtRest } from "../browser/settle.ts";
import { SteppedClock, type SteppedClockPlan } from "../browser/stepped-clock.ts";
import { endStillnessLooks, stillnessScreen } from "../browser/stillness-look.ts";
import { type ErrorRecord, IwrError, toErrorRecord } from "../errors.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { log } from "../log/logger.ts";
import { PROFILE_RULES, PROTOCOL } from "../protocol.ts";
import { evalpointRelativePath } from "../results/layout.ts";
import type { ActionType } from "../tasks/inputs.ts";
import type { Grounder, GroundingAnswer, GroundingExchange } from "./grounding/types.ts";
import type { ReplayAction } from "./replay-action.ts";
import { type ReplayStyle, type ReplaySurface, runActionWithinLimit, type TargetSummary } from "./run-action.ts";

export { type ReplayAction, recordedReplayActionOf, replayActionOf } from "./replay-action.ts";
export type { ReplayStyle, ReplaySurface, TargetSummary } from "./run-action.ts";

const logger = log("replay");

/** Our replay: the corrected profile's settle times, action semantics and grounding. */
export const IWR_REPLAY_STYLE: ReplayStyle = PROFILE_RULES.corrected;

export interface ReplayOptions {
  surface: ReplaySurface;
  /** Timings and action semantics (default IWR_REPLAY_STYLE); the evaluator passes its profile's. */
  style?: ReplayStyle;
  actions: readonly ReplayAction[];
  grounder: Grounder;
  /** Folder for `<i>.png`; created when missing. */
  evalpointsDir: string;
  /** How a step cites its screenshot (default `evalpoints/<i>.png`, the evaluator's folder). */
  screenshotLabel?: (index: number) => string;
  /** Called as each evalpoint is taken, so judging and OCR can run during the settle waits. */
  onEvalpoint?: (index: number, png: Buffer, text?: ScreenText) => void;
  /** Read the page's screen text (screen-text.ts) right after each screenshot and hand it to onEvalpoint. */
  readScreenText?: boolean;
  /**
   * Reads the page right after each screenshot (index 0: the initial one), within the
   * action limit; for callers that look at the page itself (the self-check's lint, the
   * mutant oracle). Its failure is that step's failure. The evaluator sets none.
   */
  probe?: (index: number, page: Page) => Promise<void>;
  /**
   * The page runs under the stepped clock (src/browser/stepped-clock.ts), paused since it
   * opened: the replay advances it as the recording did — the plan's amount before each
   * action and, as the fixed part of the wait, before each screenshot.
   */
  steppedClock?: SteppedClockPlan;
}

export interface ReplayStep {
  /** 0-based action index; its evalpoint is `index + 1`. */
  index: number;
  type: ActionType;
  description: string;
  ok: boolean;
  reason?: string;
  grounding?: Omit<GroundingAnswer, "exchanges">;
  target?: TargetSummary;
  typedText?: string;
  key?: string;
  scroll?: { before: number; after: number };
  /** Harness-style actions: which way the action went (e.g. "JS click (the click failed: …)"). */
  via?: string;
  /** Press: how the page was given focus before the key, when it did not have it where the recording did. */
  keyFocusGiven?: string;
  /** Press: whether a keydown reached the page's document (absent when the key navigated away, so nobody could tell). */
  keyReachedPage?: boolean;
  /** The wait before this step's screenshot, when the profile waits for the page to be at rest. */
  settle?: SettleRecord;
  exchanges: GroundingExchange[];
  durationMs: number;
  /** When the step started and ended on the host's clock (see ReplaySurface.elapsedMs). */
  startedAtMs?: number;
  endedAtMs?: number;
  /** Relative to the candidate folder, e.g. "evalpoints/2.png"; absent when the action failed. */
  evalpoint?: string;
}

export interface ReplayResult {
  /** Actions executed successfully before the first failure (or all of them). */
  executed: number;
  steps: ReplayStep[];
  /** evalpoints[i] = the PNG of `evalpoints/<i>.png`. */
  evalpoints: Buffer[];
  /** The 0-based index of the action that failed, when one did. */
  stoppedAt?: number;
  /** The wait before evalpoint 0, when the profile waits for the page to be at rest. */
  initialSettle?: SettleRecord;
  /** Set when the page itself broke down (hung, crashed, screenshot impossible). */
  error?: ErrorRecord;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The wait before a screenshot: the profile's fixed wait, or (at-rest) at least that long
 * and then until the page is at rest, within AT_REST's bound (src/browser/settle.ts).
 */
function screenshotWaiter(surface: ReplaySurface, style: ReplayStyle, requests: RequestsInFlight, clock: PlannedClock | undefined) {
  const limit = PROTOCOL.actionTimeoutMs;
  const probe: SettleProbe = {
    activity: () => surface.withTimeout("settle", limit, () => readPageActivity(surface.page)),
    screen: () => surface.withTimeout("settle screenshot", limit, () => stillnessScreen(surface.page, limit)),
    requestsInFlight: () => requests.count(),
    release: () => endStillnessLooks(surface.page, limit),
  };
  /** `actionIndex`: the action just done, or "open" for the opened page. */
  return async (actionIndex: number | "open"): Promise<SettleRecord | undefined> => {
    const after = actionIndex === "open" ? "open" : "action";
    if (clock) {
      // The recording's fixed wait was its clock advancing this far; then the wait for rest, paused.
      await clock.advance(actionIndex === "open" ? clock.plan.openMs : (clock.plan.afterActionMs[actionIndex] ?? 0));
      return waitUntilAtRest(probe, atRestTimings(after, 0));
    }
    const fixedMs = after === "open" ? style.timings.initialSettleMs : style.timings.actionSettleMs;
    if (style.screenshotSettle !== "at-rest") {
      await sleep(fixedMs);
      return undefined;
    }
    return waitUntilAtRest(probe, atRestTimings(after, fixedMs));
  };
}

/** The stepped clock of a replayed page with the plan it follows; each advance within the page time limit. */
interface PlannedClock {
  readonly plan: SteppedClockPlan;
  advance(ms: number): Promise<void>;
}

function plannedClock(surface: ReplaySurface, plan: SteppedClockPlan): PlannedClock {
  // Each step within the page time limit: a page stuck in one frame fails there, and no further step runs.
  const runStep = (ms: number) => surface.withTimeout("advance the page's clock", PROTOCOL.actionTimeoutMs, () => surface.page.clock.runFor(ms));
  const clock = new SteppedClock(surface.page, runStep);
  return { plan, advance: (ms) => clock.advance(ms) };
}

export async function replayTrajectory(options: ReplayOptions): Promise<ReplayResult> {
  const style = options.style ?? IWR_REPLAY_STYLE;
  const requests = new RequestsInFlight(options.surface.page);
  const clock = options.steppedClock ? plannedClock(options.surface, options.steppedClock) : undefined;
  try {
    return await replayWith(options, style, screenshotWaiter(options.surface, style, requests, clock), clock);
  } finally {
    requests.dispose();
  }
}

async function replayWith(
  options: ReplayOptions,
  style: ReplayStyle,
  waitForScreenshot: (actionIndex: number | "open") => Promise<SettleRecord | undefined>,
  clock: PlannedClock | undefined,
): Promise<ReplayResult> {
  const { surface, actions, grounder } = options;
  await fs.mkdir(options.evalpointsDir, { recursive: true });
  const evalpoints: Buffer[] = [];
  const steps: ReplayStep[] = [];
  const capture = async (index: number): Promise<void> => {
    // The harness's screenshot call waits 0.2 s before it shoots.
    if (style.timings.screenshotDelayMs > 0) await sleep(style.timings.screenshotDelayMs);
    const png = await surface.screenshot();
    // Read right after the shot, before anything else moves: what the judge reads is what the screenshot shows.
    const text = options.readScreenText
      ? await surface.withTimeout("read the screen text", PROTOCOL.actionTimeoutMs, () => readScreenText(surface.page))
      : undefined;
    // An evalpoint counts only once its file is written: scoring reads evalpoints/<i>.png for
    // every one listed, and a page whose text could not be read (200,000 nodes) once left a
    // listed evalpoint without its file, failing the whole task's evaluation.
    await writeFileAtomic(path.join(options.evalpointsDir, `${index}.png`), png);
    evalpoints.push(png);
    options.onEvalpoint?.(index, png, text);
    const { probe } = options;
    if (probe) await surface.withTimeout("probe", PROTOCOL.actionTimeoutMs, () => probe(index, surface.page));
  };
  const hostTime = (): number | undefined => surface.elapsedMs?.();

  let initialSettle: SettleRecord | undefined;
  try {
    initialSettle = await waitForScreenshot("open");
    const away = surface.leftTo?.();
    if (away) throw new IwrError("PAGE_HOSTILE", `the page navigated away from its own server to ${away}`, { reason: "left-server", url: away });
    await capture(0);
  } catch (error) {
    return { executed: 0, steps, evalpoints, error: toErrorRecord(error), ...(initialSettle ? { initialSettle } : {}) };
  }
  const settledStart = initialSettle ? { initialSettle } : {};

  for (const [index, action] of actions.entries()) {
    const started = Date.now();
    const step: ReplayStep = { index, type: action.type, description: action.description, ok: false, exchanges: [], durationMs: 0 };
    const startedAt = hostTime();
    if (startedAt !== undefined) step.startedAtMs = startedAt;
    const stamp = (): void => {
      const endedAt = hostTime();
      if (endedAt !== undefined) step.endedAtMs = endedAt;
    };
    steps.push(step);
    try {
      // The page's time at the action is the recording's: advanced before grounding, which reads the page as the action finds it.
      await clock?.advance(clock.plan.beforeActionMs[index] ?? 0);
      const result = await runActionWithinLimit(surface, action, grounder, style);
      step.ok = result.outcome.ok;
      if (result.outcome.reason) step.reason = result.outcome.reason;
      if (result.outcome.scroll) step.scroll = result.outcome.scroll;
      if (result.grounding) {
        const { exchanges, ...grounding } = result.grounding;
        step.grounding = grounding;
        step.exchanges = exchanges;
      }
      if (result.target) step.target = result.target;
      if (result.typedText !== undefined) step.typedText = result.typedText;
      if (result.key) step.key = result.key;
      if (result.via) step.via = result.via;
      if (result.keyFocusGiven) step.keyFocusGiven = result.keyFocusGiven;
      if (result.keyReachedPage !== undefined) step.keyReachedPage = result.keyReachedPage;
    } catch (error) {
      step.ok = false;
      step.reason = `action failed: ${toErrorRecord(error).message}`;
      step.durationMs = Date.now() - started;
      stamp();
      logger.debug(`action ${index} (${action.type}) broke down: ${step.reason}`);
      return { executed: index, steps, evalpoints, stoppedAt: index, error: toErrorRecord(error), ...settledStart };
    }
    const away = step.ok ? surface.leftTo?.() : undefined;
    if (away) {
      step.ok = false;
      step.reason = `after the action the page had navigated away from its own server to ${away}`;
    }
    if (!step.ok) {
      step.durationMs = Date.now() - started;
      stamp();
      logger.debug(`action ${index} (${action.type}) failed: ${step.reason ?? "unknown"}`);
      return { executed: index, steps, evalpoints, stoppedAt: index, ...settledStart };
    }
    try {
      const settle = await waitForScreenshot(index);
      if (settle) step.settle = settle;
      await capture(index + 1);
      step.evalpoint = (options.screenshotLabel ?? evalpointRelativePath)(index + 1);
    } catch (error) {
      // The action ran but its evalpoint could not be taken: it does not count as executed.
      step.ok = false;
      step.reason = `screenshot after the action failed: ${toErrorRecord(error).message}`;
      step.durationMs = Date.now() - started;
      stamp();
      return { executed: index, steps, evalpoints, stoppedAt: index, error: toErrorRecord(error), ...settledStart };
    }
    step.durationMs = Date.now() - started;
    stamp();
  }
  return { executed: actions.length, steps, evalpoints, ...settledStart };
}
