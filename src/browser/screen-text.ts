/**
 * What a person reads on a page's screen, from the rendered DOM: every run of text that is
 * visible in the viewport (not hidden, not transparent, not covered by another element),
 * what each field shows (its value, or its placeholder while empty, a select's chosen
 * option), the state of checkboxes, radios and switches with their labels, and which
 * control has the focus. The offline judge reads a candidate's screen this way beside OCR:
 * a value typed into a small input or light text on a coloured field is read exactly,
 * and text that is not on the screen never counts.
 *
 * The reading runs inside the page as one self-contained function (page-scripts.ts).
 */
import type { Page } from "playwright";
import { evaluateInPage } from "./page-scripts.ts";

// Defined in the page by IN_PAGE_HELPERS (in-page-helpers.ts).
declare function isWithin(node: Element, container: Element): boolean;
declare function deepElementFromPoint(x: number, y: number): Element | null;

export interface ScreenBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ScreenTextItem {
  text: string;
  /** `text`: the page's own text; `value`: what a field shows (empty for an empty field without a hint); `placeholder`: a field's hint while it is empty. */
  kind: "text" | "value" | "placeholder";
  /** Viewport CSS pixels. */
  box: ScreenBox;
}

export interface ControlState {
  /** The text a person reads as the control's name: its label, or the text right beside it. */
  label: string;
  role: "checkbox" | "radio" | "switch" | "option";
  checked: boolean;
  box: ScreenBox;
}

export interface ScreenText {
  items: ScreenTextItem[];
  controls: ControlState[];
  /** The focused control, when one has the focus (not the page body). */
  focused?: { label: string; box: ScreenBox };
  viewport: { width: number; height: number };
}

/** The most a reading keeps of each kind (a page with a huge table still answers in time). */
const MAX_ITEMS = 3000;

/** Everything that runs inside the page lives in this one function, so it is serialised once. */
function readScreenTextInPage(args: { max: number }): ScreenText {
  const width = window.innerWidth;
  const height = window.innerHeight;
  const round = (value: number) => Math.round(value * 10) / 10;
  const boxOf = (rect: DOMRect | { left: number; top: number; width: number; height: number }): ScreenBox => ({
    x: round(rect.left),
    y: round(rect.top),
    width: round(rect.width),
    height: round(rect.height),
  });
  const onScreen = (rect: { left: number; top: number; width: number; height: number }) =>
    rect.width > 0.5 && rect.height > 0.5 && rect.left < width && rect.top < height && rect.left + rect.width > 0 && rect.top + rect.height > 0;
  const clean = (text: string) => text.replace(/\s+/g, " ").trim();
  const alphaOf = (css: string) => {
    const match = /rgba?\([^)]*?,\s*[\d.]+\s*,\s*[\d.]+\s*(?:,\s*([\d.]+))?\)/.exec(css);
    return match?.[1] === undefined ? 1 : Number(match[1]);
  };
  /** Whether an element is drawn at all: displayed, visible, not fully transparent (its ancestors' opacity included). */
  const drawn = (element: Element): boolean => {
    const style = getComputedStyle(element);
    if (style.visibility === "hidden" || style.visibility === "collapse" || style.display === "none") return false;
    let opacity = 1;
    for (let current: Element | null = element; current; current = current.parentElement) {
      opacity *= Number(getComputedStyle(current).opacity || "1");
      if (opacity < 0.05) return false;
    }
    return true;
  };
  /** Whether the point of `rect` a person would look at shows `element` (or something inside it), not a cover over it. */
  const uncovered = (element: Element, rect: { left: number; top: number; width: number; height: number }): boolean => {
    const x = Math.min(width - 1, Math.max(0, rect.left + rect.width / 2));
    const y = Math.min(height - 1, Math.max(0, rect.top + rect.height / 2));
    const hit = deepElementFromPoint(x, y);
    return !hit || isWithin(hit, element) || isWithin(element, hit);
  };
  const union = (rects: ArrayLike<DOMRect>) => {
    let [left, top, right, bottom] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const rect of Array.from(rects)) {
      if (!onScreen(rect)) continue;
      left = Math.min(left, rect.left);
      top = Math.min(top, rect.top);
      right = Math.max(right, rect.right);
      bottom = Math.max(bottom, rect.bottom);
    }
    return left === Infinity ? undefined : { left, top, width: right - left, height: bottom - top };
  };

  const items: ScreenTextItem[] = [];
  const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node && items.length < args.max; node = walker.nextNode()) {
    const text = clean(node.textContent ?? "");
    const parent = node.parentElement;
    if (!text || !parent || ["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "OPTION", "TEXTAREA"].includes(parent.tagName)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const rect = union(range.getClientRects());
    if (!rect || !drawn(parent) || alphaOf(getComputedStyle(parent).color) < 0.1 || !uncovered(parent, rect)) continue;
    items.push({ text, kind: "text", box: boxOf(rect) });
  }

  const labelOf = (control: Element): string => {
    const labelled = (control.getAttribute("aria-labelledby") ?? "")
      .split(/\s+/)
      .map((id) => (id ? document.getElementById(id)?.textContent : "") ?? "")
      .join(" ");
    const labels = "labels" in control && control.labels ? Array.from(control.labels as NodeListOf<HTMLLabelElement>, (label) => label.textContent ?? "") : [];
    const named = clean([labelled, ...labels, control.getAttribute("aria-label") ?? ""].join(" "));
    if (named) return named;
    // The text right after the control (a label-less radio followed by its words), else right before it.
    const beside = (node: ChildNode | null, step: "nextSibling" | "previousSibling") => {
      for (let current = node; current; current = current[step]) {
        const text = clean(current.textContent ?? "");
        if (text) return text;
      }
      return "";
    };
    return beside(control.nextSibling, "nextSibling") || beside(control.previousSibling, "previousSibling");
  };

  const controls: ControlState[] = [];
  const fields = document.querySelectorAll("input, textarea, select, [role=checkbox], [role=radio], [role=switch], [role=option]");
  for (const field of Array.from(fields)) {
    if (items.length >= args.max * 2) break;
    const rect = field.getBoundingClientRect();
    if (!onScreen(rect) || !drawn(field)) continue;
    const tag = field.tagName;
    const type = tag === "INPUT" ? ((field as HTMLInputElement).type || "text").toLowerCase() : "";
    const role = field.getAttribute("role") ?? "";
    if (type === "checkbox" || type === "radio" || ["checkbox", "radio", "switch", "option"].includes(role)) {
      const checked =
        type === "checkbox" || type === "radio"
          ? (field as HTMLInputElement).checked
          : ["true", "mixed"].includes(field.getAttribute("aria-checked") ?? field.getAttribute("aria-selected") ?? "");
      const kind = (type || role) as ControlState["role"];
      controls.push({ label: labelOf(field), role: kind, checked, box: boxOf(rect) });
      continue;
    }
    if (tag === "SELECT") {
      const select = field as HTMLSelectElement;
      const chosen = clean(select.selectedOptions[0]?.textContent ?? "");
      if (chosen && uncovered(field, rect)) items.push({ text: chosen, kind: "value", box: boxOf(rect) });
      continue;
    }
    if (tag === "TEXTAREA" || (tag === "INPUT" && !["hidden", "button", "submit", "reset", "image", "file", "range", "color"].includes(type))) {
      const input = field as HTMLInputElement;
      if (!uncovered(field, rect) || alphaOf(getComputedStyle(field).color) < 0.1) continue;
      const value = type === "password" ? "•".repeat(input.value.length) : clean(input.value);
      if (value) items.push({ text: value, kind: "value", box: boxOf(rect) });
      else if (clean(input.placeholder ?? "")) items.push({ text: clean(input.placeholder), kind: "placeholder", box: boxOf(rect) });
      // An empty field shows nothing, and is still a field on the screen (where typed text was to go).
      else items.push({ text: "", kind: "value", box: boxOf(rect) });
    } else if (tag === "INPUT" && ["button", "submit", "reset"].includes(type)) {
      const value = clean((field as HTMLInputElement).value);
      if (value && uncovered(field, rect)) items.push({ text: value, kind: "text", box: boxOf(rect) });
    }
  }

  const active = document.activeElement;
  const focused =
    active && active !== document.body && active !== document.documentElement && onScreen(active.getBoundingClientRect())
      ? { label: labelOf(active) || clean(active.textContent ?? "").slice(0, 120), box: boxOf(active.getBoundingClientRect()) }
      : undefined;
  return { items, controls, ...(focused ? { focused } : {}), viewport: { width, height } };
}

/** The page's screen text as a person reads it (see the module comment). */
export function readScreenText(page: Page): Promise<ScreenText> {
  return evaluateInPage(page, readScreenTextInPage, { max: MAX_ITEMS });
}
