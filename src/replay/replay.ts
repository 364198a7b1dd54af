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
import { type ActionOutcome, clickElement, pressKey, scrollDown, typeIntoElement } from "../browser/actions.ts";
import { settleWithin } from "../browser/deadline.ts";
import {
  accessibilityTreeText,
  harnessVisibleElements,
  hideHighlights,
  type InteractiveElement,
  indexInteractiveElements,
  showHighlights,
} from "../browser/element-index.ts";
import { harnessClick, harnessPress, harnessScroll, harnessType } from "../browser/harness-actions.ts";
import { giveKeyFocus, type KeyFocus, pressWatched } from "../browser/key-focus.ts";
import { readScreenText, type ScreenText } from "../browser/screen-text.ts";
import { atRestTimings, RequestsInFlight, readPageActivity, type SettleProbe, type SettleRecord, stillnessScreen, waitUntilAtRest } from "../browser/settle.ts";
import { collectTextBlocks, type TextBlock } from "../browser/text-blocks.ts";
import { type ErrorRecord, IwrError, toErrorRecord } from "../errors.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { log } from "../log/logger.ts";
import { PROFILE_RULES, PROTOCOL, type ProfileRules } from "../protocol.ts";
import { evalpointRelativePath } from "../results/layout.ts";
import type { ActionType } from "../tasks/inputs.ts";
import type { Action } from "../tasks/schema.ts";
import type { Grounder, GroundingAnswer, GroundingContext, GroundingExchange } from "./grounding/types.ts";

const logger = log("replay");

export interface ReplaySurface {
  page: Page;
  /** Viewport PNG, time-limited by the host. */
  screenshot(): Promise<Buffer>;
  /** Runs a page call at most `ms` long; a hung page is torn down and the call rejects. */
  withTimeout<T>(label: string, ms: number, run: () => Promise<T>): Promise<T>;
  /**
   * Where the page went when its main frame left the candidate's own server (a redirect
   * to the internet ends on the browser's error page); undefined while it is still there.
   */
  leftTo?(): string | undefined;
  /** Milliseconds on the host's clock (the one page incidents are stamped with), so steps and incidents line up. */
  elapsedMs?(): number;
}

/** One action to replay: what to do and to what, in words (the grounder finds the element). */
export interface ReplayAction {
  type: ActionType;
  /** The target in natural language, e.g. "the blue 'Add to cart' button". */
  description: string;
  /** Type: the text to enter, when known (the benchmark's own lines carry it only in the description). */
  text?: string;
  /** Press: the key, when known (else the grounder names it from the description). */
  key?: string;
  /** Press: where the focus was when the key was recorded (the task line's `key_focus`), so the replay gives it the same way. */
  keyFocus?: KeyFocus;
}

/** A task line's action as the replay needs it: what to do and to what (the given track's view of an action). */
export function replayActionOf(action: Action): ReplayAction {
  const { description, text, key } = action.parameters;
  return { type: action.type, description, ...(text !== undefined ? { text } : {}), ...(key !== undefined ? { key } : {}) };
}

/**
 * A task line's action with what the recording noted about performing it (where a key's
 * focus was): the evaluator's view of the true trajectory, which is the truth's side.
 */
export function recordedReplayActionOf(action: Action): ReplayAction {
  return { ...replayActionOf(action), ...(action.key_focus ? { keyFocus: action.key_focus } : {}) };
}

/** How a replay waits and acts: the protocol profile's replay rules (src/protocol.ts). */
export type ReplayStyle = Pick<ProfileRules, "timings" | "screenshotSettle" | "actionStyle" | "grounding">;

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
}

/** The element an action was executed on, as eval.json shows it. */
export interface TargetSummary {
  index: number;
  tag: string;
  role: string;
  text: string;
  label?: string;
  /** Viewport box when it was indexed (before any scroll into view). */
  box: { x: number; y: number; width: number; height: number };
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

function summarize(el: InteractiveElement | undefined): TargetSummary | undefined {
  if (!el) return undefined;
  const label = el.ariaLabel || el.label || el.placeholder || el.title || el.alt;
  return { index: el.index, tag: el.tag, role: el.role, text: el.text, ...(label ? { label } : {}), box: el.box };
}

interface StepOutcome {
  outcome: ActionOutcome;
  grounding?: GroundingAnswer;
  target?: TargetSummary;
  typedText?: string;
  key?: string;
  via?: string;
  keyFocusGiven?: string;
  keyReachedPage?: boolean;
}

/**
 * The harness's way: the 30 s action limit covers the grounding calls too; past it the
 * step fails (the page itself stays; a hung page call is still the host's to tear down).
 */
async function runActionWithinLimit(surface: ReplaySurface, action: ReplayAction, grounder: Grounder, style: ReplayStyle): Promise<StepOutcome> {
  if (style.actionStyle !== "harness") return runAction(surface, action, grounder, style);
  const settled = await settleWithin(runAction(surface, action, grounder, style), PROTOCOL.actionTimeoutMs);
  if (settled.status === "done") return settled.value;
  if (settled.status === "failed") throw settled.error;
  return { outcome: { ok: false, reason: `the action, grounding included, took over ${PROTOCOL.actionTimeoutMs} ms` } };
}

/** Grounds the target (Click/Type) and executes the action. */
async function runAction(surface: ReplaySurface, action: ReplayAction, grounder: Grounder, style: ReplayStyle): Promise<StepOutcome> {
  const { page } = surface;
  const limit = PROTOCOL.actionTimeoutMs;
  const description = action.description;
  const harness = style.actionStyle === "harness";
  switch (action.type) {
    case "Scroll":
      if (harness) {
        const { via, ...outcome } = await surface.withTimeout("scroll", limit + style.timings.scrollExtraSettleMs, () =>
          harnessScroll(page, style.timings.scrollExtraSettleMs),
        );
        return { outcome, via };
      }
      return { outcome: await surface.withTimeout("scroll", limit, () => scrollDown(page, limit)) };
    case "Press": {
      let key = action.key?.trim();
      let grounding: GroundingAnswer | undefined;
      if (!key) {
        const named = await grounder.nameKey(description);
        grounding = { index: -1, method: grounder.kind === "llm" ? "text" : "heuristic", exchanges: named.exchanges };
        key = named.key;
        if (!key) return { outcome: { ok: false, reason: named.reason ?? "no key could be named for this Press" }, grounding };
      }
      const pressed = key;
      // A key reaches the page as it did when recorded: the focus first, where the recording had it.
      const keyFocusGiven = await surface
        .withTimeout("key focus", limit, () => giveKeyFocus(page, action.keyFocus))
        .catch((error: unknown) => `could not check the focus: ${toErrorRecord(error).message}`);
      const focusNote = keyFocusGiven ? { keyFocusGiven } : {};
      const reached = (watched: { reachedPage: boolean | undefined }) => (watched.reachedPage === undefined ? {} : { keyReachedPage: watched.reachedPage });
      if (harness) {
        const watched = await surface.withTimeout("press", limit, () => pressWatched(page, () => harnessPress(page, pressed)));
        const { via, ...outcome } = watched.result;
        return { outcome, grounding, key: pressed, via, ...focusNote, ...reached(watched) };
      }
      const watched = await surface.withTimeout("press", limit, () => pressWatched(page, () => pressKey(page, pressed)));
      return { outcome: watched.result, grounding, key: pressed, ...focusNote, ...reached(watched) };
    }
    case "Click":
    case "Type": {
      const indexed = await surface.withTimeout("index elements", limit, () => indexInteractiveElements(page));
      // The harness's grounding sees only the top-most elements near the viewport; an index outside them "does not exist".
      const elements = style.grounding === "harness" ? harnessVisibleElements(indexed) : indexed;
      let textBlocks: Promise<TextBlock[]> | undefined;
      const context: GroundingContext = {
        elements,
        // The harness sends the whole tree; ours is capped so a huge page cannot crowd out the prompt.
        accessibilityTree: () =>
          surface.withTimeout("accessibility tree", limit, () =>
            accessibilityTreeText(page, style.grounding === "harness" ? { maxChars: Number.POSITIVE_INFINITY } : {}),
          ),
        // Read once per action, and only when a description places its target next to some words.
        textBlocks: () => (textBlocks ??= surface.withTimeout("text blocks", limit, () => collectTextBlocks(page))),
        highlightedScreenshot: async () => {
          await surface.withTimeout("highlight", limit, () => showHighlights(page, elements));
          try {
            return await surface.screenshot();
          } finally {
            await surface.withTimeout("unhighlight", limit, () => hideHighlights(page)).catch(() => undefined);
          }
        },
      };
      const grounding = await grounder.locate(
        { actionType: action.type, description, ...(action.type === "Type" && action.text !== undefined ? { text: action.text } : {}) },
        context,
      );
      const element = elements.find((el) => el.index === grounding.index);
      if (grounding.index < 0 || !element) {
        const reason =
          grounding.index < 0
            ? `grounding found no element for '${description}'${grounding.reason ? `: ${grounding.reason}` : ""}`
            : `grounding answered element ${grounding.index}, which is not in the list of ${elements.length}`;
        return { outcome: { ok: false, reason }, grounding };
      }
      const target = summarize(element);
      const text = grounding.text ?? action.text ?? "";
      if (harness) {
        const { via, ...outcome } = await surface.withTimeout(action.type === "Click" ? "click" : "type", limit, () =>
          action.type === "Click" ? harnessClick(page, element.index) : harnessType(page, element.index, text),
        );
        return { outcome, grounding, target, via, ...(action.type === "Type" ? { typedText: text } : {}) };
      }
      if (action.type === "Click") {
        return { outcome: await surface.withTimeout("click", limit + 1_000, () => clickElement(page, element.index, limit)), grounding, target };
      }
      const outcome = await surface.withTimeout("type", limit + 1_000, () => typeIntoElement(page, element.index, text, limit));
      return { outcome, grounding, target, typedText: text };
    }
  }
}

/**
 * The wait before a screenshot: the profile's fixed wait, or (at-rest) at least that long
 * and then until the page is at rest, within AT_REST's bound (src/browser/settle.ts).
 */
function screenshotWaiter(surface: ReplaySurface, style: ReplayStyle, requests: RequestsInFlight) {
  const limit = PROTOCOL.actionTimeoutMs;
  const probe: SettleProbe = {
    activity: () => surface.withTimeout("settle", limit, () => readPageActivity(surface.page)),
    screen: () => surface.withTimeout("settle screenshot", limit, () => stillnessScreen(surface.page, limit)),
    requestsInFlight: () => requests.count(),
  };
  return async (after: "open" | "action"): Promise<SettleRecord | undefined> => {
    const fixedMs = after === "open" ? style.timings.initialSettleMs : style.timings.actionSettleMs;
    if (style.screenshotSettle !== "at-rest") {
      await sleep(fixedMs);
      return undefined;
    }
    return waitUntilAtRest(probe, atRestTimings(after, fixedMs));
  };
}

export async function replayTrajectory(options: ReplayOptions): Promise<ReplayResult> {
  const style = options.style ?? IWR_REPLAY_STYLE;
  const requests = new RequestsInFlight(options.surface.page);
  try {
    return await replayWith(options, style, screenshotWaiter(options.surface, style, requests));
  } finally {
    requests.dispose();
  }
}

async function replayWith(
  options: ReplayOptions,
  style: ReplayStyle,
  waitForScreenshot: (after: "open" | "action") => Promise<SettleRecord | undefined>,
): Promise<ReplayResult> {
  const { surface, actions, grounder } = options;
  await fs.mkdir(options.evalpointsDir, { recursive: true });
  const evalpoints: Buffer[] = [];
  const steps: ReplayStep[] = [];
  const capture = async (index: number): Promise<void> => {
    // The harness's screenshot call waits 0.2 s before it shoots.
    if (style.timings.screenshotDelayMs > 0) await sleep(style.timings.screenshotDelayMs);
    const png = await surface.screenshot();
    evalpoints.push(png);
    // Read right after the shot, before anything else moves: what the judge reads is what the screenshot shows.
    const text = options.readScreenText
      ? await surface.withTimeout("read the screen text", PROTOCOL.actionTimeoutMs, () => readScreenText(surface.page))
      : undefined;
    options.onEvalpoint?.(index, png, text);
    await writeFileAtomic(path.join(options.evalpointsDir, `${index}.png`), png);
    const { probe } = options;
    if (probe) await surface.withTimeout("probe", PROTOCOL.actionTimeoutMs, () => probe(index, surface.page));
  };
  const clock = (): number | undefined => surface.elapsedMs?.();

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
    const startedAt = clock();
    if (startedAt !== undefined) step.startedAtMs = startedAt;
    const stamp = (): void => {
      const endedAt = clock();
      if (endedAt !== undefined) step.endedAtMs = endedAt;
    };
    steps.push(step);
    try {
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
      const settle = await waitForScreenshot("action");
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
