/**
 * One step of a replay: ground the action's target (Click/Type), or name its key (Press),
 * and execute it on the page, our way or the harness's (src/browser/harness-actions.ts),
 * within the action limit. replay.ts runs the steps in order and takes the screenshots.
 */
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
import { giveKeyFocus, pressWatched } from "../browser/key-focus.ts";
import { collectTextBlocks, type TextBlock } from "../browser/text-blocks.ts";
import { toErrorRecord } from "../errors.ts";
import { PROTOCOL, type ProfileRules } from "../protocol.ts";
import type { Grounder, GroundingAnswer, GroundingContext } from "./grounding/types.ts";
import type { ReplayAction } from "./replay-action.ts";

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

/** How a replay waits and acts: the protocol profile's replay rules (src/protocol.ts). */
export type ReplayStyle = Pick<ProfileRules, "timings" | "screenshotSettle" | "actionStyle" | "grounding">;

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

function summarize(el: InteractiveElement | undefined): TargetSummary | undefined {
  if (!el) return undefined;
  const label = el.ariaLabel || el.label || el.placeholder || el.title || el.alt;
  return { index: el.index, tag: el.tag, role: el.role, text: el.text, ...(label ? { label } : {}), box: el.box };
}

export interface StepOutcome {
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
export async function runActionWithinLimit(surface: ReplaySurface, action: ReplayAction, grounder: Grounder, style: ReplayStyle): Promise<StepOutcome> {
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
