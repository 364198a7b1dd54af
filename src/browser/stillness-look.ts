/**
 * The at-rest wait's look at a page's picture (settle.ts compares two looks byte for byte):
 * a half-size viewport screenshot through the page's DevTools session, with the caret
 * hidden while the page is watched and shown again once the wait is over.
 */
import { errors, type Frame, type Page } from "playwright";
import { settleWithin } from "./deadline.ts";
import { evaluateInFrame } from "./devtools-world.ts";
import { pageSession } from "./page-session.ts";

/**
 * The stillness check's picture of the viewport: half size, PNG, through the page's
 * DevTools session. A full-size screenshot (Playwright's, JPEG) cost about 85 ms of CPU
 * across the browser's processes, and a page is looked at twice or more a wait; at half size it
 * costs about 45. Each output pixel averages a 2 × 2 block (Chromium filters when it
 * scales the copy; test/browser/settle.test.ts shows a one-pixel grey dot still shows at
 * odd and even coordinates), and PNG keeps every level: what is lost is a change of a
 * level or two in a lone pixel, which rounds away in the average.
 *
 * A look taken right after a repaint shows the change, but its raster can still differ by
 * one grey level along a tile's edge from the picture a frame or two later (measured on
 * test/browser/settle.test.ts's page: a column of 22 half-size pixels, in 4 of 60 looks
 * taken right after a change on an idle machine and 25 of 150 under two busy loops, gone
 * 100 ms later; none once two animation frames had passed). That only makes two looks of
 * the same page differ, so a wait may go on a window or two longer; it never makes a
 * changing page look still.
 *
 * While a page is watched, a style in each of its documents hides the caret: its blinking
 * would keep a still page from ever counting as at rest (Playwright hides it for each of
 * its screenshots instead, on the editable elements themselves). A page whose own rules
 * outrank it (a more specific `!important` caret colour, a content security policy that
 * refuses inline styles) keeps blinking, and its wait runs to the bound.
 * A page without a fixed viewport or a session is looked at the Playwright way.
 */
export async function stillnessScreen(page: Page, timeoutMs: number): Promise<Buffer> {
  const viewport = page.viewportSize();
  const playwrightLook = () => page.screenshot({ type: "jpeg", quality: 60, timeout: timeoutMs, caret: "hide" });
  if (!viewport) return playwrightLook();
  const look = async () => {
    const session = await pageSession(page);
    const main = page.mainFrame();
    const [viewportOrigin] = await Promise.all([
      inFrameBriefly(main, hideCaretAndLocateViewport),
      ...page
        .frames()
        .filter((frame) => frame !== main)
        .map((frame) => inFrameBriefly(frame, hideCaretAndLocateViewport)),
    ]);
    // No session, or the main document is being replaced: the Playwright way waits for it.
    if (!session || !viewportOrigin) return playwrightLook();
    // The clip is in document coordinates: the viewport is where the page is scrolled to.
    const { data } = await session.send("Page.captureScreenshot", {
      format: "png",
      optimizeForSpeed: true,
      clip: { ...viewportOrigin, width: viewport.width, height: viewport.height, scale: STILLNESS_SCALE },
    });
    return Buffer.from(data, "base64");
  };
  const settled = await settleWithin(look(), timeoutMs);
  if (settled.status === "done") return settled.value;
  if (settled.status === "failed") throw settled.error;
  // Playwright's own timeout error, as its screenshot threw: the page host counts it as the page's timeout.
  throw new errors.TimeoutError(`a stillness screenshot took longer than ${timeoutMs} ms`);
}

/** The stillness picture's scale (see stillnessScreen). */
const STILLNESS_SCALE = 0.5;
/** Names the style element that hides the caret while a page is watched (one per process, unlikely on any page). */
const CARET_STYLE_ID = `iwr-still-caret-${Math.random().toString(36).slice(2, 10)}`;
/**
 * How long a frame's script may take. A frame without a document yet (a lazy iframe out
 * of view) never runs one, and Playwright would wait for it; it has no caret either.
 */
const FRAME_SCRIPT_MS = 500;

/** `script(CARET_STYLE_ID)` in a frame, or undefined when the frame fails or does not answer within FRAME_SCRIPT_MS. */
async function inFrameBriefly<R>(frame: Frame, script: (id: string) => R): Promise<R | undefined> {
  // The main frame's outside the page's trace, so the wait's looks do not bury the replay's actions there.
  const settled = await settleWithin(evaluateInFrame(frame, script, CARET_STYLE_ID), FRAME_SCRIPT_MS);
  return settled.status === "done" ? (settled.value as R) : undefined;
}

/*
 * The two scripts below travel to the page as their source text: they must stay free of
 * inner named functions (see page-scripts.ts).
 */

/**
 * Runs in each frame: adds the caret-hiding style unless it is there (a frame that
 * navigated lost it); returns where the frame's visual viewport is in its document.
 */
function hideCaretAndLocateViewport(id: string): { x: number; y: number } {
  if (!document.getElementById(id)) {
    const style = document.createElement("style");
    style.id = id;
    style.textContent = "* { caret-color: transparent !important; }";
    (document.head ?? document.documentElement)?.append(style);
  }
  return { x: window.visualViewport?.pageLeft ?? window.scrollX, y: window.visualViewport?.pageTop ?? window.scrollY };
}

/** Runs in each frame: removes the caret-hiding style. */
function showCaret(id: string): void {
  document.getElementById(id)?.remove();
}

/**
 * Gives the page its caret back once the wait is over, so nothing of ours stays in its
 * documents; waits at most `timeoutMs` (a hung page keeps the style, and is torn down anyway).
 */
export async function endStillnessLooks(page: Page, timeoutMs: number): Promise<void> {
  await settleWithin(Promise.all(page.frames().map((frame) => inFrameBriefly(frame, showCaret))), timeoutMs);
}
