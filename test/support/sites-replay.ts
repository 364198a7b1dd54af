/**
 * Replays a bundled site's action script in a real page, the way the recorder does,
 * and collects what the sites tests check: locator match counts, the page's text in
 * view after each step, network requests, page errors and `.btn` reachability.
 */
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright";
import { PROTOCOL } from "../../src/protocol.ts";
import { performAction, type RecorderPacing } from "../../src/recorder/perform.ts";
import type { ScriptAction } from "./sites-scripts.ts";

export interface StepReport {
  index: number;
  action: ScriptAction;
  /** How many elements the locator matched right before the action (undefined for Scroll/Press). */
  locatorMatches?: number;
  scrollYBefore: number;
  scrollYAfter: number;
  /** Quoted literals of the assertion that could not be found in the viewport afterwards. */
  missingLiterals: string[];
}

/**
 * Literal strings an assertion quotes: 'like this' or "like this". An apostrophe
 * inside a word (the user's) does not open a quote.
 */
export function quotedLiterals(assertion: string): string[] {
  const found: string[] = [];
  const pattern = /(?<![\p{L}\p{N}])(['"])(.+?)\1(?![\p{L}\p{N}])/gu;
  for (const match of assertion.matchAll(pattern)) found.push(match[2]!);
  return found;
}

/**
 * Which of `literals` are NOT visible in the viewport: a literal counts as visible
 * when the deepest rendered element whose text contains it (or a form field whose
 * value contains it) intersects the viewport. Case and whitespace are normalised.
 */
export async function literalsMissingFromView(page: Page, literals: string[]): Promise<string[]> {
  if (literals.length === 0) return [];
  return page.evaluate(`(${FIND_MISSING_LITERALS_IN_PAGE})(${JSON.stringify(literals)})`) as Promise<string[]>;
}

/**
 * In-page source (a string, because tsx's name-keeping transform would otherwise
 * inject a helper the page does not have).
 */
const FIND_MISSING_LITERALS_IN_PAGE = `(wanted) => {
  const norm = (text) => text.replace(/\\s+/g, " ").trim().toLowerCase();
  const inView = (element) => {
    if (!element.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && box.bottom > 0 && box.right > 0 && box.top < window.innerHeight && box.left < window.innerWidth;
  };
  const missing = [];
  for (const literal of wanted) {
    const needle = norm(literal);
    let seen = false;
    for (const field of document.querySelectorAll("input, textarea")) {
      if (norm(field.value).includes(needle) && inView(field)) seen = true;
    }
    const holders = Array.from(document.body.querySelectorAll("*")).filter(
      (element) => element instanceof HTMLElement && norm(element.innerText || "").includes(needle),
    );
    const deepest = holders.filter((element) => !holders.some((other) => other !== element && element.contains(other)));
    if (deepest.some(inView)) seen = true;
    if (!seen) missing.push(literal);
  }
  return missing;
}`;

/** No pauses or pointer glide: the sites check needs the recorder's actions, not its pacing. */
const NO_PACING: RecorderPacing = { pauseBeforeMs: 0, pauseAfterMs: 0, pointerTravelMs: 0, keystrokeMs: 0 };

/**
 * Waits (up to 3 s) until window.scrollY stops moving: Chromium animates keyboard
 * scrolling (End, PageDown), and on a loaded machine that outlasts a short settle. At
 * rest means unchanged over 250 ms of wall time, not over two frames: under load the
 * compositor can hold a scroll animation still for a frame or two, which looked like
 * rest and failed the check in one CI run. A page still scrolling after that is checked
 * as it is (the literals check reports it).
 */
async function scrollAtRest(page: Page): Promise<void> {
  await page
    .waitForFunction(
      () =>
        new Promise<boolean>((resolve) => {
          const first = window.scrollY;
          setTimeout(() => resolve(window.scrollY === first), 250);
        }),
      undefined,
      { timeout: 3_000, polling: 50 },
    )
    .catch(() => undefined);
}

/** Executes one scripted action with the recorder's own code (so the check and the recording cannot drift apart). */
export async function executeAction(page: Page, action: ScriptAction, stepNumber = 1): Promise<void> {
  await performAction(page, action, stepNumber, { x: 0, y: 0 }, NO_PACING);
}

export interface ButtonAudit {
  /** `.btn` elements in the DOM. */
  total: number;
  /** Rendered `.btn` elements that a user could not reach: empty box, or outside the page's scrollable area. */
  unreachable: string[];
  /** Clickable elements (buttons, links, checkboxes...) that are neither `.btn` nor inside one. */
  unmarked: string[];
}

/**
 * The `.btn` convention, checked in the page's current state: every clickable
 * element carries the class (or sits inside an element that does), and every
 * rendered `.btn` is reachable by scrolling. Hidden ones (closed modal, other tab)
 * are fine until a state shows them.
 */
export async function auditButtons(page: Page): Promise<ButtonAudit> {
  return page.evaluate(AUDIT_BUTTONS_IN_PAGE) as Promise<ButtonAudit>;
}

const AUDIT_BUTTONS_IN_PAGE =
  `(() => {
  const name = (element) => element.tagName.toLowerCase() + (element.id ? "#" + element.id : "") + ` +
  `(element.dataset.test ? "[data-test=" + element.dataset.test + "]" : "") + ` +
  `" '" + (element.innerText || element.getAttribute("aria-label") || "").trim().slice(0, 30) + "'";
  const buttons = Array.from(document.querySelectorAll(".btn"));
  const pageWidth = document.documentElement.clientWidth;
  const pageHeight = document.documentElement.scrollHeight;
  const unreachable = [];
  for (const button of buttons) {
    if (!button.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
    const box = button.getBoundingClientRect();
    const top = box.top + window.scrollY;
    const inside = box.width > 0 && box.height > 0 && box.left >= 0 && box.right <= pageWidth + 1 && top >= 0 && top + box.height <= pageHeight + 1;
    if (!inside) unreachable.push(name(button));
  }
  const clickable = document.querySelectorAll("button, a[href], input[type=checkbox], input[type=radio], ` +
  `input[type=submit], input[type=button], select, [role=button], [onclick]");
  const unmarked = Array.from(clickable).filter((element) => !element.closest(".btn")).map(name);
  return { total: buttons.length, unreachable, unmarked };
})()`;

/** Replays every action with the protocol's settle time, screenshotting into `shotsDir` when given. */
export async function replayScript(
  page: Page,
  actions: readonly ScriptAction[],
  options: { settleMs?: number; shotsDir?: string; onStep?: (index: number) => Promise<void> } = {},
): Promise<StepReport[]> {
  const settleMs = options.settleMs ?? PROTOCOL.actionSettleMs;
  const reports: StepReport[] = [];
  if (options.shotsDir) {
    fs.mkdirSync(options.shotsDir, { recursive: true });
    await page.screenshot({ path: path.join(options.shotsDir, "step_0.png") });
  }
  for (const [index, action] of actions.entries()) {
    const locatorMatches = action.type === "Click" || action.type === "Type" ? await page.locator(action.locator).count() : undefined;
    const scrollYBefore = (await page.evaluate("window.scrollY")) as number;
    if (locatorMatches === undefined || locatorMatches === 1) await executeAction(page, action, index + 1);
    await page.waitForTimeout(settleMs);
    await scrollAtRest(page);
    const scrollYAfter = (await page.evaluate("window.scrollY")) as number;
    const missingLiterals = await literalsMissingFromView(page, quotedLiterals(action.assertion));
    if (options.shotsDir) await page.screenshot({ path: path.join(options.shotsDir, `step_${index + 1}.png`) });
    reports.push({ index, action, locatorMatches, scrollYBefore, scrollYAfter, missingLiterals });
    await options.onStep?.(index);
  }
  return reports;
}
