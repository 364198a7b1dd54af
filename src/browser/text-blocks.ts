/**
 * The page's visible text with where it stands: one block per element that holds text
 * of its own (its direct text nodes), with the box those words cover. A grounder reads
 * these to place a control relative to words that are not themselves a control ("the
 * button under 'Total'", "the icon to the right of the price"). Open shadow roots are
 * walked too; text that is not rendered (display:none, hidden, transparent) is left out.
 */
import type { Page } from "playwright";
import type { ElementBox } from "./element-collector.ts";
import { evaluateInPage } from "./page-scripts.ts";

export interface TextBlock {
  /** The element's own words, whitespace collapsed, at most 120 characters. */
  text: string;
  /** Viewport coordinates, CSS pixels: the element's box when it holds nothing but these words and is not much larger, else the words' own boxes. */
  box: ElementBox;
}

/** A page may hold any amount of text; relations never need more than this many blocks. */
export const MAX_TEXT_BLOCKS = 1500;

function collectTextBlocksInPage(args: { max: number }): TextBlock[] {
  const blocks: TextBlock[] = [];
  const skipped = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "TITLE"]);
  const roots: Array<Node> = document.body ? [document.body] : [];
  const range = document.createRange();
  while (roots.length > 0 && blocks.length < args.max) {
    const root = roots.pop()!;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let node: Node | null = walker.currentNode; node && blocks.length < args.max; node = walker.nextNode()) {
      const el = node as Element;
      if (el.shadowRoot) roots.push(el.shadowRoot);
      if (skipped.has(el.tagName)) continue;
      const own = Array.from(el.childNodes).filter((child) => child.nodeType === Node.TEXT_NODE && (child.textContent ?? "").trim());
      if (own.length === 0) continue;
      if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      let left = Infinity;
      let top = Infinity;
      let right = -Infinity;
      let bottom = -Infinity;
      for (const text of own) {
        range.selectNodeContents(text);
        const rect = range.getBoundingClientRect();
        if (rect.width < 1 || rect.height < 1) continue;
        left = Math.min(left, rect.left);
        top = Math.min(top, rect.top);
        right = Math.max(right, rect.right);
        bottom = Math.max(bottom, rect.bottom);
      }
      if (right <= left || bottom <= top) continue;
      // A heading or label that holds only its words stands for its whole box (an <h3> spans its card: "under the Daypack").
      if (!Array.from(el.children).some((child) => (child.textContent ?? "").trim())) {
        const whole = el.getBoundingClientRect();
        if (whole.width * whole.height <= 4 * (right - left) * (bottom - top) + 40_000) {
          [left, top, right, bottom] = [whole.left, whole.top, whole.right, whole.bottom];
        }
      }
      const text = own
        .map((child) => child.textContent ?? "")
        .join(" ")
        .replace(/\s+/g, " ")
        .trim()
        .slice(0, 120);
      blocks.push({ text, box: { x: Math.round(left), y: Math.round(top), width: Math.round(right - left), height: Math.round(bottom - top) } });
    }
  }
  return blocks;
}

/** Every visible text block of the page, in document order (shadow roots after the light tree they sit in). */
export async function collectTextBlocks(page: Page): Promise<TextBlock[]> {
  return evaluateInPage(page, collectTextBlocksInPage, { max: MAX_TEXT_BLOCKS });
}
