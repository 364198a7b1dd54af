/**
 * A visible mouse pointer for the recording. Headless Chromium draws no cursor, so a
 * video of clicks would show things changing by themselves; a small dot that follows
 * the real mouse events makes each click readable. It lives in a custom element
 * outside <body> (so selectors like `div` never match it) and is hidden while a
 * checkpoint is taken, so checkpoints show exactly what the evaluator will see.
 */
import type { Page } from "playwright";

const CURSOR_TAG = "iwr-recorder-cursor";

/** Runs in every document before the page's own scripts (context.addInitScript). */
export const CURSOR_INIT_SCRIPT = `(() => {
  const install = () => {
    if (document.querySelector("${CURSOR_TAG}")) return;
    const dot = document.createElement("${CURSOR_TAG}");
    dot.style.cssText = "position:fixed;left:0;top:0;width:18px;height:18px;margin:-9px 0 0 -9px;" +
      "border-radius:50%;background:rgba(255,60,60,0.75);border:2px solid #fff;box-shadow:0 0 3px rgba(0,0,0,0.6);" +
      "pointer-events:none;z-index:2147483647;display:none;transition:transform 80ms;";
    document.documentElement.appendChild(dot);
    const follow = (event) => {
      dot.style.left = event.clientX + "px";
      dot.style.top = event.clientY + "px";
      if (dot.dataset.hidden !== "1") dot.style.display = "block";
    };
    window.addEventListener("mousemove", follow, true);
    window.addEventListener("mousedown", () => { dot.style.transform = "scale(0.6)"; }, true);
    window.addEventListener("mouseup", () => { dot.style.transform = ""; }, true);
  };
  if (document.documentElement) install();
  else document.addEventListener("DOMContentLoaded", install);
})();`;

/** Hides (or shows again) the dot; shown only once the mouse has moved at least once. */
export async function setCursorHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate(
    ({ tag, hide }) => {
      const dot = document.querySelector<HTMLElement>(tag);
      if (!dot) return;
      dot.dataset.hidden = hide ? "1" : "0";
      if (hide) dot.style.display = "none";
      else if (dot.style.left) dot.style.display = "block";
    },
    { tag: CURSOR_TAG, hide: hidden },
  );
}
