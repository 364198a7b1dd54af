/**
 * Executing one trajectory action on a page, with the benchmark's semantics
 * (IWR-PROTOCOL.md §3.2). Targets are element numbers from `indexInteractiveElements`;
 * choosing the number is the grounder's job, not this module's.
 */
import type { Page } from "playwright";
import { PROTOCOL } from "../protocol.ts";
import { elementLocator } from "./element-index.ts";

export interface ActionOutcome {
  ok: boolean;
  /** Why it failed, in words a person reading eval.json understands. */
  reason?: string;
  /** Scroll only: window.scrollY before and after. */
  scroll?: { before: number; after: number };
}

function failure(reason: string): ActionOutcome {
  return { ok: false, reason };
}

function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // Playwright's messages carry a multi-line call log; the first line says what happened.
  return message.split("\n")[0] ?? message;
}

/** Click element `index`. Playwright's own checks (visible, stable, receives the click) decide success. */
export async function clickElement(page: Page, index: number, timeoutMs: number = PROTOCOL.actionTimeoutMs): Promise<ActionOutcome> {
  try {
    await elementLocator(page, index).click({ timeout: timeoutMs });
    return { ok: true };
  } catch (error) {
    return failure(`click on element ${index} failed: ${describeError(error)}`);
  }
}

const FIELD_SELECTOR = "input:not([type=hidden]), textarea, [contenteditable=''], [contenteditable=true]";

/**
 * Type `text` into element `index`. A text field is cleared and typed into key by key
 * (pages listen to keydown/input as with a person typing); a chosen container holding
 * one field types into that field; anything else is clicked and typed at the focus.
 */
export async function typeIntoElement(
  page: Page,
  index: number,
  text: string,
  timeoutMs: number = PROTOCOL.actionTimeoutMs,
): Promise<ActionOutcome> {
  const started = Date.now();
  const remaining = () => Math.max(1, timeoutMs - (Date.now() - started));
  try {
    const target = elementLocator(page, index);
    // No named inner functions here: this source runs in the page (see evaluateInPage).
    const editable = await target.evaluate(
      (el, selector) =>
        el.tagName === "INPUT" || el.tagName === "TEXTAREA" || (el as HTMLElement).isContentEditable
          ? "self"
          : el.querySelectorAll(selector).length === 1
            ? "child"
            : "none",
      FIELD_SELECTOR,
      { timeout: remaining() },
    );
    const field = editable === "child"
      ? target.locator(FIELD_SELECTOR).first()
      : target;
    if (editable === "none") {
      await field.click({ timeout: remaining() });
    } else {
      await field.fill("", { timeout: remaining() });
      await field.focus({ timeout: remaining() });
    }
    await page.keyboard.type(text);
    return { ok: true };
  } catch (error) {
    return failure(`typing into element ${index} failed: ${describeError(error)}`);
  }
}

const KEY_ALIASES: Record<string, string> = {
  enter: "Enter", return: "Enter", esc: "Escape", escape: "Escape", tab: "Tab", space: " ", spacebar: " ",
  backspace: "Backspace", delete: "Delete", del: "Delete", up: "ArrowUp", down: "ArrowDown", left: "ArrowLeft",
  right: "ArrowRight", arrowup: "ArrowUp", arrowdown: "ArrowDown", arrowleft: "ArrowLeft", arrowright: "ArrowRight",
  pageup: "PageUp", pagedown: "PageDown", home: "Home", end: "End", ctrl: "Control", control: "Control",
  cmd: "Meta", command: "Meta", meta: "Meta", alt: "Alt", option: "Alt", shift: "Shift",
};

/** Normalises a key as datasets and models write it ("enter", "Ctrl+A", "arrow down") to Playwright's name. */
export function normalizeKey(raw: string): string {
  const trimmed = raw.trim().replace(/^['"`]|['"`]$/g, "");
  return trimmed
    .split(/\s*\+\s*/)
    .map((part) => {
      const compact = part.replace(/[\s_-]+/g, "").toLowerCase();
      if (KEY_ALIASES[compact]) return KEY_ALIASES[compact];
      if (/^f\d{1,2}$/.test(compact)) return compact.toUpperCase();
      if (part.length === 1) return part;
      return part.charAt(0).toUpperCase() + part.slice(1);
    })
    .join("+");
}

export async function pressKey(page: Page, key: string): Promise<ActionOutcome> {
  const normalized = normalizeKey(key);
  try {
    await page.keyboard.press(normalized);
    return { ok: true };
  } catch (error) {
    return failure(`pressing '${normalized}' failed: ${describeError(error)}`);
  }
}

/** §3.2 Scroll: half a viewport down; success only if window.scrollY moved by more than the protocol's minimum. */
export async function scrollDown(page: Page, timeoutMs: number = PROTOCOL.actionTimeoutMs): Promise<ActionOutcome> {
  try {
    const result = await withDeadline(
      page.evaluate((fraction) => {
        const before = window.scrollY;
        // "instant" so a page-wide `scroll-behavior: smooth` cannot turn the check into a race.
        window.scrollBy({ top: window.innerHeight * fraction, left: 0, behavior: "instant" });
        return { before, after: window.scrollY };
      }, PROTOCOL.scrollViewportFraction),
      timeoutMs,
    );
    if (Math.abs(result.after - result.before) > PROTOCOL.scrollMinDeltaPx) return { ok: true, scroll: result };
    return { ok: false, scroll: result, reason: `scroll moved window.scrollY by ${Math.abs(result.after - result.before)} px (needs > ${PROTOCOL.scrollMinDeltaPx})` };
  } catch (error) {
    return failure(`scroll failed: ${describeError(error)}`);
  }
}

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
