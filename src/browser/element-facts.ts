/**
 * In-page readings of what an element looks like to a person, for the element collector
 * (element-collector.ts): why it can be clicked, the plain name of a colour, the picture
 * it shows, the words naming its icon, whether it is round, and the colour of the box it
 * sits in. Like in-page-helpers.ts these travel to the page as source text
 * (ELEMENT_FACTS_SOURCE, placed before every page script by page-scripts.ts); the
 * collector names them through `declare function` lines.
 */

// Defined in the page by IN_PAGE_HELPERS (in-page-helpers.ts).
declare function composedParent(node: Element): Element | null;
/** The DevTools console's listener lookup: present only when the script runs with the command-line API (devtools-world.ts). */
declare const getEventListeners: ((target: EventTarget) => Record<string, unknown[]>) | undefined;

/**
 * Why an element counts as something a user can act on, strongest first:
 * `control` a native control (a, button, input, select, textarea, summary, option, label);
 * `role` an ARIA widget role; `editable` contenteditable; `handler` a click handler the page
 * set as a property or attribute (`onclick`, `ng-click`, `@click`); `tabindex` focusable by
 * Tab; `styled` drawn as a control: the `btn` class, or a pointer cursor (the top of such a
 * subtree); `listener` a click listener added with addEventListener, found only through
 * DevTools. The harness's list never holds the last: browser-use's page script has no
 * DevTools API.
 */
export type ClickableBecause = "control" | "role" | "editable" | "handler" | "tabindex" | "styled" | "listener";

/** Plain colour name a person would use for a CSS colour ("" when transparent): the hue decides, lightness splits black, gray and white. */
function plainColourName(css: string): string {
  const match = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(css);
  if (!match) return "";
  if (match[4] !== undefined && Number(match[4]) < 0.2) return "";
  const [r, g, b] = [Number(match[1]) / 255, Number(match[2]) / 255, Number(match[3]) / 255];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const lightness = (max + min) / 2;
  const chroma = max - min;
  // Greys: light grey (#eee) is still "grey" to a person; only near-white is "white".
  if (chroma < 0.1 || (chroma < 0.16 && (lightness < 0.2 || lightness > 0.9))) {
    if (lightness >= 0.95) return "white";
    if (lightness <= 0.16) return "black";
    return "gray";
  }
  let hue = 0;
  if (max === r) hue = (((g - b) / chroma) % 6) * 60;
  else if (max === g) hue = ((b - r) / chroma + 2) * 60;
  else hue = ((r - g) / chroma + 4) * 60;
  if (hue < 0) hue += 360;
  if (hue < 15 || hue >= 345) return lightness > 0.75 ? "pink" : lightness < 0.3 ? "brown" : "red";
  if (hue < 45) return lightness < 0.38 ? "brown" : "orange";
  if (hue < 68) return lightness < 0.3 ? "brown" : "yellow";
  if (hue < 160) return "green";
  if (hue < 195) return "teal";
  if (hue < 255) return "blue";
  if (hue < 290) return "purple";
  // Between violet and rose: dark ones read as purple (#800080), bright ones as pink (#ff00ff, #ff69b4).
  if (hue < 330) return lightness < 0.45 ? "purple" : "pink";
  return "pink";
}

/** Listener types that mean "clicking here does something". */
const CLICK_EVENTS = ["click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend"];

/** A click handler the page set as a property or attribute (what browser-use's page script also reads). */
function hasClickHandler(el: Element): boolean {
  const handlers = el as unknown as Record<string, unknown>;
  if (typeof handlers.onclick === "function" || el.hasAttribute("onclick")) return true;
  return el.hasAttribute("ng-click") || el.hasAttribute("@click") || el.hasAttribute("v-on:click");
}

/** A click-like listener added with addEventListener, when the DevTools API is at hand (else false). */
function hasClickListener(el: Element): boolean {
  if (typeof getEventListeners !== "function") return false;
  try {
    const listeners = getEventListeners(el);
    return CLICK_EVENTS.some((type) => (listeners[type]?.length ?? 0) > 0);
  } catch {
    return false;
  }
}

/** Words of an icon reference: a class list, a sprite id (`#icon-trash`), a file name (`img/close.svg`). */
function iconReferenceWords(reference: string | null | undefined): string {
  if (!reference) return "";
  if (/^(?:data|blob):/i.test(reference.trim())) return "";
  const lastPart = reference.split(/[#/]/).pop() ?? "";
  return lastPart.replace(/\.[a-z0-9]{2,4}(?:[?].*)?$/i, "").replace(/[-_.]+/g, " ");
}

/** The file name of a CSS `background-image: url(...)` (a CSS icon), else "". */
function backgroundImageWords(style: CSSStyleDeclaration): string {
  const url = /url\(["']?([^"')]+)["']?\)/.exec(style.backgroundImage)?.[1];
  return iconReferenceWords(url);
}

/**
 * Words naming the icon an element shows when it shows no text: the classes of the icon
 * elements inside it (`<i class="fa fa-trash">`, `<svg class="icon-close">`), a sprite's
 * `<use href="#menu">`, an image's file name, `data-icon`, and a CSS background image's
 * file name. Its own class and id are listed apart (`className`, `id`).
 */
function iconWordsOf(el: Element, style: CSSStyleDeclaration): string {
  const parts: string[] = [backgroundImageWords(style)];
  if (el.tagName === "IMG") parts.push(iconReferenceWords(el.getAttribute("src")));
  parts.push(el.getAttribute("data-icon") ?? "");
  const inner = Array.from(el.querySelectorAll("i, span, svg, use, img, [data-icon]")).slice(0, 8);
  for (const node of inner) {
    const className = node.getAttribute("class");
    if (className) parts.push(className);
    if (node.tagName.toLowerCase() === "use") parts.push(iconReferenceWords(node.getAttribute("href") ?? node.getAttribute("xlink:href")));
    if (node.tagName === "IMG") parts.push(iconReferenceWords(node.getAttribute("src")));
    parts.push(node.getAttribute("data-icon") ?? "");
  }
  return parts.join(" ").replace(/\s+/g, " ").trim().slice(0, 100);
}

/** What picture an element is or shows as its content: an <img>, an <svg>, a canvas, a video, a CSS background image, or "". */
function mediaOf(el: Element, style: CSSStyleDeclaration, ownText: string): string {
  const tag = el.tagName.toLowerCase();
  if (tag === "img" || tag === "picture") return "img";
  if (tag === "svg" || tag === "canvas" || tag === "video") return tag;
  if (tag === "input" && (el as HTMLInputElement).type === "image") return "img";
  if (ownText) return "";
  if (/url\(/.test(style.backgroundImage)) return "background";
  const inner = el.querySelector("img, picture, svg, canvas, video");
  if (!inner) return "";
  const name = inner.tagName.toLowerCase();
  return name === "picture" ? "img" : name;
}

/** Round to a person: a circle or a pill (corner radius at least half the shorter side). */
function isRound(style: CSSStyleDeclaration, rect: DOMRect): boolean {
  const radius = style.borderTopLeftRadius;
  const shorter = Math.min(rect.width, rect.height);
  if (radius.endsWith("%")) return Number.parseFloat(radius) >= 50;
  return shorter > 0 && Number.parseFloat(radius) >= shorter / 2 - 1;
}

/** The plain colour of the nearest box around the element that paints a background, below <body> ("" when there is none). */
function boxColourOf(el: Element): string {
  let node = composedParent(el);
  for (let depth = 0; node && node !== document.body && node !== document.documentElement && depth < 12; depth++, node = composedParent(node)) {
    const colour = plainColourName(getComputedStyle(node).backgroundColor);
    if (colour) return colour;
  }
  return "";
}

/** The facts' source, as function declarations, for the front of a page script. */
export const ELEMENT_FACTS_SOURCE = [
  `const CLICK_EVENTS = ${JSON.stringify(CLICK_EVENTS)};`,
  ...[plainColourName, hasClickHandler, hasClickListener, iconReferenceWords, backgroundImageWords, iconWordsOf, mediaOf, isRound, boxColourOf].map((fn) =>
    fn.toString(),
  ),
].join("\n");
