/**
 * Performing one scripted action the way a person would, so the video shows it:
 * the pointer glides to the target, rests on it, then clicks; text is typed one
 * character at a time. The resulting page state is the one the evaluator reaches by
 * executing the same action (Press and Scroll call the evaluator's own functions;
 * Type clears, focuses and types as it does), which is what makes the checkpoints
 * comparable with evalpoints.
 */
import type { Locator, Page } from "playwright";
import { pressKey, scrollDown } from "../browser/actions.ts";
import { type FocusReading, pressWatched, readKeyFocus } from "../browser/key-focus.ts";
import { IwrError } from "../errors.ts";
import { PROTOCOL } from "../protocol.ts";
import type { ScriptAction } from "./script-schema.ts";

/** How the recording is paced. Not protocol timings: these only shape the video. */
export interface RecorderPacing {
  /** Still time before each action (after the pointer arrives) — the "before" state. */
  readonly pauseBeforeMs: number;
  /** Still time after each action (includes the checkpoint settle) — the "after" state. */
  readonly pauseAfterMs: number;
  /** Time for the pointer to travel to a target. */
  readonly pointerTravelMs: number;
  /** Delay between typed characters. */
  readonly keystrokeMs: number;
}

/** ≥1 s still on each side of an action, so 1 fps sampling sees every state. */
export const DEFAULT_PACING: RecorderPacing = Object.freeze({
  pauseBeforeMs: 1000,
  pauseAfterMs: 1200,
  pointerTravelMs: 500,
  keystrokeMs: 110,
});

/** What the recorder saw of a key press: where the focus was just before it, and whether the key reached the page's document. */
export interface PressNote extends FocusReading {
  /** Undefined when the key navigated to another document, so nobody could tell. */
  readonly reachedPage: boolean | undefined;
}

export interface PointerState {
  x: number;
  y: number;
}

function describe(action: ScriptAction, stepNumber: number): string {
  return `step ${stepNumber} (${action.type} "${action.description}")`;
}

/** The action's element, which must be exactly one. */
export async function resolveSingleTarget(page: Page, selector: string, action: ScriptAction, stepNumber: number): Promise<Locator> {
  let count: number;
  try {
    count = await page.locator(selector).count();
  } catch (error) {
    throw new IwrError(
      "RECORDER",
      `${describe(action, stepNumber)}: locator "${selector}" is not a valid selector: ` +
        `${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      { step: stepNumber, locator: selector },
    );
  }
  if (count !== 1) {
    throw new IwrError(
      "RECORDER",
      `${describe(action, stepNumber)}: locator "${selector}" matched ${count} elements; it must match exactly 1 ` +
        `(make the selector more specific${count === 0 ? ", or check the element exists at this point" : ""})`,
      { step: stepNumber, locator: selector, matches: count },
    );
  }
  return page.locator(selector);
}

/** Eased pointer travel in small steps, so the cursor visibly moves in the video. */
async function glidePointer(page: Page, pointer: PointerState, target: { x: number; y: number }, travelMs: number): Promise<void> {
  const steps = Math.max(1, Math.round(travelMs / 40));
  const from = { ...pointer };
  for (let step = 1; step <= steps; step++) {
    const t = step / steps;
    const eased = t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2;
    await page.mouse.move(from.x + (target.x - from.x) * eased, from.y + (target.y - from.y) * eased);
    await page.waitForTimeout(travelMs / steps);
  }
  pointer.x = target.x;
  pointer.y = target.y;
}

async function pointAt(page: Page, target: Locator, pointer: PointerState, pacing: RecorderPacing, label: string): Promise<void> {
  // Scroll first, like Playwright's own click does, so the box is in the viewport.
  await target.scrollIntoViewIfNeeded({ timeout: PROTOCOL.actionTimeoutMs });
  const box = await target.boundingBox();
  if (!box) throw new IwrError("RECORDER", `${label}: the element is not visible, so it cannot be clicked`);
  await glidePointer(page, pointer, { x: box.x + box.width / 2, y: box.y + box.height / 2 }, pacing.pointerTravelMs);
}

/**
 * Runs one action with the "before" pacing; the caller handles settle, checkpoint and the
 * "after" pause. A Press returns what was seen of its key (where the focus was).
 */
export async function performAction(
  page: Page,
  action: ScriptAction,
  stepNumber: number,
  pointer: PointerState,
  pacing: RecorderPacing,
  /** The still time before the action: real time, or the stepped clock advancing (session.ts). */
  pause: (ms: number) => Promise<unknown> = (ms) => page.waitForTimeout(ms),
  /**
   * Under the stepped clock a Click's pause comes before the pointer's travel, as the
   * replay advances the clock before it clicks: the page's frames run with the pointer
   * where it was in both.
   */
  steppedClock = false,
): Promise<PressNote | undefined> {
  const label = describe(action, stepNumber);
  const timeout = PROTOCOL.actionTimeoutMs;
  try {
    switch (action.type) {
      case "Click": {
        const target = await resolveSingleTarget(page, action.locator, action, stepNumber);
        if (steppedClock) await pause(pacing.pauseBeforeMs);
        await pointAt(page, target, pointer, pacing, label);
        if (!steppedClock) await pause(pacing.pauseBeforeMs);
        await target.click({ timeout });
        return;
      }
      case "Type": {
        // Like the evaluator: clear the field, focus it, type key by key — no pointer
        // travel, so no :hover state the evaluator's replay would not have.
        const target = await resolveSingleTarget(page, action.locator, action, stepNumber);
        await pause(pacing.pauseBeforeMs);
        await target.fill("", { timeout });
        await target.focus({ timeout });
        await page.keyboard.type(action.text, { delay: pacing.keystrokeMs });
        return;
      }
      case "Press": {
        await pause(pacing.pauseBeforeMs);
        // Where the key goes, noted for the replay (src/browser/key-focus.ts).
        const focus = await readKeyFocus(page);
        const { result: outcome, reachedPage } = await pressWatched(page, () => pressKey(page, action.key));
        if (!outcome.ok) throw new IwrError("RECORDER", `${label}: ${outcome.reason ?? "the key press failed"}`, { step: stepNumber });
        return { ...focus, reachedPage };
      }
      case "Scroll": {
        await pause(pacing.pauseBeforeMs);
        // The evaluator's own scroll (half a viewport, instant) and its success rule.
        const outcome = await scrollDown(page, timeout);
        if (!outcome.ok) {
          throw new IwrError("RECORDER", `${label}: ${outcome.reason ?? "the scroll failed"}; the evaluator would fail this step too`, { step: stepNumber });
        }
        return;
      }
    }
  } catch (error) {
    if (error instanceof IwrError) throw error;
    throw new IwrError(
      "RECORDER",
      `${label} failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      { step: stepNumber },
      { cause: error },
    );
  }
}
