/**
 * Executing one trajectory action on a page, with the benchmark's semantics
 * (docs/protocol.md §3.2). Targets are element numbers from `indexInteractiveElements`;
 * choosing the number is the grounder's job, not this module's.
 */
import type { Page } from "playwright";
import { PROTOCOL } from "../protocol.ts";
import { elementLocator, evaluateOnElement } from "./element-index.ts";

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

/**
 * Where a person's click on the element would go, read in the page. `playwright`: its
 * centre is the element's own (or it cannot be clicked at all, e.g. disabled or
 * hidden): Playwright's click, with its checks, decides. `element-point`: the centre is
 * covered (a sticky header over the top of a button) but (x, y) reaches the element.
 * `label-point`: the element is a transparent custom checkbox under its own label, and a
 * click at (x, y) lands on that label, which toggles it as the user's click does.
 * `covered`: nothing reaches it. x, y are viewport coordinates.
 */
interface ClickPlan {
  how: "playwright" | "element-point" | "label-point" | "covered";
  x: number;
  y: number;
  /** Whether the element's whole box is inside the viewport (else Playwright would scroll first). */
  fullyInView: boolean;
}

// Defined in the page by IN_PAGE_HELPERS (in-page-helpers.ts, placed before every page script), for planClick.
declare function composedParent(node: Element): Element | null;
declare function isWithin(node: Element, container: Element): boolean;
declare function deepElementFromPoint(x: number, y: number): Element | null;

/** Runs in the page (see evaluateOnElement). */
function planClick(el: Element): ClickPlan {
  const rect = el.getBoundingClientRect();
  const fullyInView = rect.top >= 0 && rect.left >= 0 && rect.bottom <= window.innerHeight && rect.right <= window.innerWidth;
  const centre = { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
  const leaveToPlaywright: ClickPlan = { how: "playwright", ...centre, fullyInView };
  // Playwright's own waiting reports these as they are (not visible, not enabled).
  if (rect.width < 1 || rect.height < 1 || (el as HTMLInputElement).disabled === true) return leaveToPlaywright;
  const inViewport = (x: number, y: number) => x >= 0 && y >= 0 && x < window.innerWidth && y < window.innerHeight;
  const centreHit = inViewport(centre.x, centre.y) ? deepElementFromPoint(centre.x, centre.y) : null;
  if (centreHit && isWithin(centreHit, el)) return leaveToPlaywright;
  // Points of the box's visible part, nearest the centre first; a 7x7 grid finds a strip of a tenth of the box.
  const fractions = [0.5, 0.35, 0.65, 0.2, 0.8, 0.06, 0.94];
  const pointsIn = (box: DOMRect): Array<{ x: number; y: number }> => {
    const left = Math.max(box.left, 0);
    const right = Math.min(box.right, window.innerWidth);
    const top = Math.max(box.top, 0);
    const bottom = Math.min(box.bottom, window.innerHeight);
    if (right - left < 1 || bottom - top < 1) return [];
    return fractions
      .flatMap((fy) => fractions.map((fx) => ({ fx, fy })))
      .sort((a, b) => Math.hypot(a.fx - 0.5, a.fy - 0.5) - Math.hypot(b.fx - 0.5, b.fy - 0.5))
      .map(({ fx, fy }) => ({ x: Math.min(right - 0.5, left + (right - left) * fx), y: Math.min(bottom - 0.5, top + (bottom - top) * fy) }));
  };
  for (const point of pointsIn(rect)) {
    const hit = deepElementFromPoint(point.x, point.y);
    if (hit && isWithin(hit, el)) return { how: "element-point", ...point, fullyInView };
  }
  // A click on a control's label acts on the control, unless it lands on another control inside the label.
  const labels = Array.from((el as HTMLInputElement).labels ?? []);
  const reachesLabel = (hit: Element): boolean => {
    const label = labels.find((candidate) => isWithin(hit, candidate));
    if (!label) return false;
    for (let current: Element | null = hit; current && current !== label; current = composedParent(current)) {
      if (current.matches("a[href], button, input, select, textarea")) return false;
    }
    return true;
  };
  for (const box of [rect, ...labels.map((label) => label.getBoundingClientRect())]) {
    for (const point of pointsIn(box)) {
      const hit = deepElementFromPoint(point.x, point.y);
      if (hit && reachesLabel(hit)) return { how: "label-point", ...point, fullyInView };
    }
  }
  return { how: "covered", ...centre, fullyInView };
}

/**
 * Clicks element `index` where a person's click would land: its centre when that is the
 * element's own, else a visible part of it, else (a transparent custom checkbox) its
 * label. Playwright's click, which only ever aims at the centre, waits out the whole
 * action limit when the centre is covered. The element is first scrolled as
 * Playwright's click scrolls it, so points are read where the click happens.
 */
async function clickAsAPersonWould(page: Page, index: number, remaining: () => number): Promise<void> {
  const target = elementLocator(page, index);
  let plan = await evaluateOnElement(page, index, planClick, undefined, remaining());
  if (plan.how !== "playwright" && !plan.fullyInView) {
    await target.scrollIntoViewIfNeeded({ timeout: remaining() });
    plan = await evaluateOnElement(page, index, planClick, undefined, remaining());
  }
  if (plan.how === "element-point") {
    // Still Playwright's click, checks included, aimed at the visible part.
    const box = await target.boundingBox({ timeout: remaining() });
    if (box) {
      await target.click({ position: { x: plan.x - box.x, y: plan.y - box.y }, timeout: remaining() });
      return;
    }
  }
  if (plan.how === "label-point") {
    // Playwright would refuse: the label, not the element, receives the click (which is the point).
    await page.mouse.click(plan.x, plan.y);
    return;
  }
  await target.click({ timeout: remaining() });
}

/** Click element `index` where a person would (see clickAsAPersonWould); Playwright's checks decide success. */
export async function clickElement(page: Page, index: number, timeoutMs: number = PROTOCOL.actionTimeoutMs): Promise<ActionOutcome> {
  const started = Date.now();
  const remaining = () => Math.max(1, timeoutMs - (Date.now() - started));
  try {
    await clickAsAPersonWould(page, index, remaining);
    return { ok: true };
  } catch (error) {
    return failure(`click on element ${index} failed: ${describeError(error)}`);
  }
}

// Every editable value of the attribute ("", "true", "plaintext-only", any case): only "false" turns editing off.
const FIELD_SELECTOR = "input:not([type=hidden]), textarea, [contenteditable]:not([contenteditable=false i])";

/**
 * Type `text` into element `index`. A text field is cleared and typed into key by key
 * (pages listen to keydown/input as with a person typing); a chosen container holding
 * one field types into that field; anything else is clicked and typed at the focus.
 */
export async function typeIntoElement(page: Page, index: number, text: string, timeoutMs: number = PROTOCOL.actionTimeoutMs): Promise<ActionOutcome> {
  const started = Date.now();
  const remaining = () => Math.max(1, timeoutMs - (Date.now() - started));
  try {
    const target = elementLocator(page, index);
    // No named inner functions here: this source runs in the page (see page-scripts.ts).
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
    const field = editable === "child" ? target.locator(FIELD_SELECTOR).first() : target;
    if (editable === "none") {
      await clickAsAPersonWould(page, index, remaining);
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
  enter: "Enter",
  return: "Enter",
  esc: "Escape",
  escape: "Escape",
  tab: "Tab",
  space: " ",
  spacebar: " ",
  backspace: "Backspace",
  delete: "Delete",
  del: "Delete",
  up: "ArrowUp",
  down: "ArrowDown",
  left: "ArrowLeft",
  right: "ArrowRight",
  arrowup: "ArrowUp",
  arrowdown: "ArrowDown",
  arrowleft: "ArrowLeft",
  arrowright: "ArrowRight",
  pageup: "PageUp",
  pagedown: "PageDown",
  home: "Home",
  end: "End",
  ctrl: "Control",
  control: "Control",
  cmd: "Meta",
  command: "Meta",
  meta: "Meta",
  alt: "Alt",
  option: "Alt",
  shift: "Shift",
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
    return {
      ok: false,
      scroll: result,
      reason: `scroll moved window.scrollY by ${Math.abs(result.after - result.before)} px (needs > ${PROTOCOL.scrollMinDeltaPx})`,
    };
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
