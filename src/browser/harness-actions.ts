/**
 * The published harness's action semantics (its browser layer, docs/protocol.md §3
 * "What the harness's browser layer does"), for the official profile. They are looser
 * than ours (actions.ts), and that is the point: a page scores what it would score there.
 *
 * - Click and Type fail only when the element does not exist. Any other error falls
 *   back — a JS click, then a mouse click at the element's centre — and the step counts
 *   as done; which way it went is recorded.
 * - Type clears the field, clicks it, then types.
 * - Press sends the raw key; an unknown key is typed character by character; always done.
 * - Scroll scrolls the focused element's scrollable container, else the first large
 *   scrollable container, else the window, by int(innerHeight × 0.5); it waits, then
 *   succeeds only when window.scrollY moved by more than 5 px — so scrolling an inner
 *   container alone does not count, as in the harness.
 */
import type { Page } from "playwright";
import { PROTOCOL } from "../protocol.ts";
import type { ActionOutcome } from "./actions.ts";
import { elementLocator } from "./element-index.ts";

/** How long the first, Playwright click may wait for the element to be clickable before the fallbacks (our reading of the harness's browser layer). */
export const HARNESS_CLICK_ATTEMPT_MS = 1500;

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}

async function exists(page: Page, index: number): Promise<boolean> {
  return (await elementLocator(page, index).count()) > 0;
}

/** Click, then the JS click, then a click at the element's centre; the first that does not throw wins, and even none is "done". */
async function clickWithFallbacks(page: Page, index: number): Promise<string> {
  const target = elementLocator(page, index);
  try {
    await target.click({ timeout: HARNESS_CLICK_ATTEMPT_MS });
    return "click";
  } catch (clickError) {
    try {
      await target.evaluate((el) => (el as HTMLElement).click(), undefined, { timeout: HARNESS_CLICK_ATTEMPT_MS });
      return `JS click (the click failed: ${firstLine(clickError)})`;
    } catch {
      try {
        const box = await target.boundingBox({ timeout: HARNESS_CLICK_ATTEMPT_MS });
        if (box) await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
        return `click at the element's centre (the click failed: ${firstLine(clickError)})`;
      } catch (mouseError) {
        return `every click failed (${firstLine(mouseError)}); counted as done, as the harness does`;
      }
    }
  }
}

export async function harnessClick(page: Page, index: number): Promise<ActionOutcome & { via: string }> {
  if (!(await exists(page, index))) return { ok: false, reason: `element ${index} does not exist`, via: "none" };
  return { ok: true, via: await clickWithFallbacks(page, index) };
}

export async function harnessType(page: Page, index: number, text: string): Promise<ActionOutcome & { via: string }> {
  if (!(await exists(page, index))) return { ok: false, reason: `element ${index} does not exist`, via: "none" };
  const target = elementLocator(page, index);
  let via = "fill, click, type";
  try {
    await target.fill("", { timeout: HARNESS_CLICK_ATTEMPT_MS });
  } catch (error) {
    via = `click, type (clearing failed: ${firstLine(error)})`;
  }
  via = `${via}; ${await clickWithFallbacks(page, index)}`;
  try {
    await page.keyboard.type(text);
  } catch (error) {
    via = `${via}; typing failed (${firstLine(error)}), counted as done`;
  }
  return { ok: true, via };
}

export async function harnessPress(page: Page, key: string): Promise<ActionOutcome & { via: string }> {
  try {
    await page.keyboard.press(key);
    return { ok: true, via: "key" };
  } catch (error) {
    // An unknown key name: each character is sent on its own.
    for (const character of key) await page.keyboard.press(character).catch(() => undefined);
    return { ok: true, via: `character by character (${firstLine(error)})` };
  }
}

/** A scrollable container counts as large when it covers at least this share of the viewport's area. */
export const LARGE_CONTAINER_SHARE = 0.5;

export async function harnessScroll(page: Page, settleMs: number): Promise<ActionOutcome & { via: string }> {
  // No named inner functions here: this source runs in the page, where a bundler's
  // name-keeping helper (tsx's __name) does not exist.
  const scrolled = await page.evaluate(
    ({ fraction, largeShare }) => {
      let container: Element | null = null;
      for (let el = document.activeElement; el && el !== document.body && el !== document.documentElement; el = el.parentElement) {
        if (/(auto|scroll|overlay)/.test(getComputedStyle(el).overflowY) && el.scrollHeight > el.clientHeight) {
          container = el;
          break;
        }
      }
      if (!container) {
        const viewportArea = innerWidth * innerHeight;
        container =
          Array.from(document.querySelectorAll("body *")).find((el) => {
            if (!/(auto|scroll|overlay)/.test(getComputedStyle(el).overflowY) || el.scrollHeight <= el.clientHeight) return false;
            const box = el.getBoundingClientRect();
            return box.width * box.height >= largeShare * viewportArea;
          }) ?? null;
      }
      const before = window.scrollY;
      const by = Math.trunc(innerHeight * fraction);
      if (container) container.scrollBy({ top: by, behavior: "instant" });
      else window.scrollBy({ top: by, left: 0, behavior: "instant" });
      return { before, target: container ? container.tagName.toLowerCase() + (container.id ? `#${container.id}` : "") : "window" };
    },
    { fraction: PROTOCOL.scrollViewportFraction, largeShare: LARGE_CONTAINER_SHARE },
  );
  await page.waitForTimeout(settleMs);
  const after = await page.evaluate(() => window.scrollY);
  const moved = Math.abs(after - scrolled.before);
  const via = `scrolled ${scrolled.target}`;
  if (moved > PROTOCOL.scrollMinDeltaPx) return { ok: true, scroll: { before: scrolled.before, after }, via };
  return {
    ok: false,
    scroll: { before: scrolled.before, after },
    reason: `${via}; window.scrollY moved by ${moved} px (needs > ${PROTOCOL.scrollMinDeltaPx})`,
    via,
  };
}
