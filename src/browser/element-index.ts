/**
 * The page's interactive elements, numbered, as the evaluator's grounding sees them
 * (docs/protocol.md §3.2): one in-page pass collects every element a user could act
 * on, open shadow roots included, tags it with `data-iwr-idx` so an action can address
 * it by number, and returns the facts a grounder matches a description against
 * (visible text, labels, role, colours, box). Also: the accessibility-tree text and
 * the numbered highlight overlay used by the vision fallback. The in-page pass itself is
 * element-collector.ts.
 */
import type { Page } from "playwright";
import { evaluateWithDevtools } from "./devtools-world.ts";
import { collectInPage, type InteractiveElement } from "./element-collector.ts";
import { evaluateInPage, pageFunction, pageScriptSource } from "./page-scripts.ts";

export type { ElementBox, InteractiveElement } from "./element-collector.ts";

/** Attribute that carries an element's number between indexing and acting. */
export const INDEX_ATTRIBUTE = "data-iwr-idx";
const OVERLAY_ID = "__iwr_highlight_overlay";
/** A hostile page can hold millions of nodes; grounding never needs more than this. */
export const MAX_INDEXED_ELEMENTS = 400;

/** How far beyond the viewport the harness's element list reaches (browser-use's viewport_expansion). */
export const HARNESS_VIEWPORT_EXPANSION_PX = 500;

/**
 * The elements the harness's grounding would be shown (the official profile): top-most
 * near the viewport, and never one known to be clickable only through a listener that
 * DevTools found (browser-use's page script cannot see those).
 */
export function harnessVisibleElements(elements: readonly InteractiveElement[]): InteractiveElement[] {
  return elements.filter((el) => el.topMost !== false && el.nearViewport !== false && el.clickableBecause !== "listener");
}

/**
 * Runs `fn(element, arg)` on element `index` of the latest indexing (Playwright's locator
 * finds it inside open shadow roots too), as a page script (page-scripts.ts).
 */
export async function evaluateOnElement<A, R>(page: Page, index: number, fn: (element: Element, arg: A) => R, arg: A, timeoutMs: number): Promise<R> {
  return elementLocator(page, index).evaluate(pageFunction(fn), arg as unknown, { timeout: timeoutMs });
}

/**
 * Numbers every interactive element of the page (replacing any earlier numbering). The
 * collector runs in the page's world with the DevTools console's command-line API
 * (devtools-world.ts), so it can ask `getEventListeners` which elements hear clicks
 * through addEventListener (`npm run bench:element-index` measures the cost); where
 * DevTools is out of reach it runs as a plain page script and sees handlers set as
 * properties and attributes only.
 */
export async function indexInteractiveElements(page: Page): Promise<InteractiveElement[]> {
  const args = { attribute: INDEX_ATTRIBUTE, max: MAX_INDEXED_ELEMENTS, expansion: HARNESS_VIEWPORT_EXPANSION_PX };
  const viaDevtools = await evaluateWithDevtools(page, pageScriptSource(collectInPage, args));
  return viaDevtools ? (viaDevtools.value as InteractiveElement[]) : evaluateInPage(page, collectInPage, args);
}

/** The locator of element `index` from the latest `indexInteractiveElements` call. */
export function elementLocator(page: Page, index: number) {
  return page.locator(`[${INDEX_ATTRIBUTE}="${index}"]`);
}

function quote(text: string): string {
  return JSON.stringify(text);
}

/**
 * One line per element, the format the grounding prompt shows the model:
 * `[3] <button class="btn primary" aria-label="Add"> "Add to cart"`.
 */
export function formatElementList(elements: readonly InteractiveElement[]): string {
  if (elements.length === 0) return "(no interactive elements)";
  return elements
    .map((el) => {
      const attributes: string[] = [];
      if (el.role !== "generic" && el.role !== el.tag) attributes.push(`role=${quote(el.role)}`);
      if (el.inputType) attributes.push(`type=${quote(el.inputType)}`);
      if (el.id) attributes.push(`id=${quote(el.id)}`);
      if (el.name) attributes.push(`name=${quote(el.name)}`);
      if (el.className) attributes.push(`class=${quote(el.className)}`);
      if (el.ariaLabel) attributes.push(`aria-label=${quote(el.ariaLabel)}`);
      if (el.label) attributes.push(`label=${quote(el.label)}`);
      if (el.placeholder) attributes.push(`placeholder=${quote(el.placeholder)}`);
      if (el.title) attributes.push(`title=${quote(el.title)}`);
      if (el.alt) attributes.push(`alt=${quote(el.alt)}`);
      if (el.value) attributes.push(`value=${quote(el.value)}`);
      if (el.disabled) attributes.push("disabled");
      if (!el.inViewport) attributes.push("offscreen");
      const open = `<${[el.tag, ...attributes].join(" ")}>`;
      return `[${el.index}] ${open}${el.text ? ` ${quote(el.text)}` : ""}`;
    })
    .join("\n");
}

/** The page's accessibility tree as Playwright's aria-snapshot text, capped in length. */
export async function accessibilityTreeText(page: Page, options: { maxChars?: number; timeoutMs?: number } = {}): Promise<string> {
  const maxChars = options.maxChars ?? 20_000;
  const text = await page.ariaSnapshot({ timeout: options.timeoutMs ?? 5_000 });
  return text.length > maxChars ? `${text.slice(0, maxChars)}\n... (truncated)` : text;
}

/** Draws a numbered box over every indexed element in the viewport (pointer-events off). */
export async function showHighlights(page: Page, elements: readonly InteractiveElement[]): Promise<void> {
  const boxes = elements.filter((el) => el.inViewport).map((el) => ({ index: el.index, box: el.box }));
  await page.evaluate(
    ({ id, boxes }) => {
      document.getElementById(id)?.remove();
      const overlay = document.createElement("div");
      overlay.id = id;
      overlay.style.cssText = "position:fixed;inset:0;pointer-events:none;z-index:2147483647;";
      const colours = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000"];
      for (const { index, box } of boxes) {
        const colour = colours[index % colours.length] ?? "#e6194b";
        const frame = document.createElement("div");
        frame.style.cssText =
          `position:fixed;left:${box.x}px;top:${box.y}px;width:${box.width}px;height:${box.height}px;` + `outline:2px solid ${colour};box-sizing:border-box;`;
        const label = document.createElement("div");
        label.textContent = String(index);
        label.style.cssText = `position:absolute;top:-2px;left:-2px;background:${colour};color:#fff;` + "font:bold 12px/14px monospace;padding:0 3px;";
        frame.appendChild(label);
        overlay.appendChild(frame);
      }
      document.documentElement.appendChild(overlay);
    },
    { id: OVERLAY_ID, boxes },
  );
}

export async function hideHighlights(page: Page): Promise<void> {
  await page.evaluate((id) => document.getElementById(id)?.remove(), OVERLAY_ID);
}
