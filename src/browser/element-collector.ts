/**
 * The in-page half of the element index: collectInPage walks the page, open shadow roots
 * included, tags every element a user could act on with its number, and returns the facts
 * a grounder matches a description against. It runs inside the page as source text
 * (page-scripts.ts), so it is one self-contained function; the helpers it shares with
 * other page scripts come from in-page-helpers.ts, and its readings of how a control looks
 * and why it is clickable from element-facts.ts. The Node side (numbering, locating,
 * listing, highlighting) is element-index.ts.
 */

import type { ClickableBecause } from "./element-facts.ts";

export type { ClickableBecause } from "./element-facts.ts";

// Defined in the page by IN_PAGE_HELPERS (in-page-helpers.ts), for collectInPage.
declare function composedParent(node: Element): Element | null;
declare function isWithin(node: Element, container: Element): boolean;
declare function deepElementFromPoint(x: number, y: number): Element | null;
// Defined in the page by ELEMENT_FACTS_SOURCE (element-facts.ts).
declare function plainColourName(css: string): string;
declare function hasClickHandler(el: Element): boolean;
declare function hasClickListener(el: Element): boolean;
declare function iconWordsOf(el: Element, style: CSSStyleDeclaration): string;
declare function mediaOf(el: Element, style: CSSStyleDeclaration, ownText: string): string;
declare function isRound(style: CSSStyleDeclaration, rect: DOMRect): boolean;
declare function boxColourOf(el: Element): string;

export interface ElementBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface InteractiveElement {
  index: number;
  tag: string;
  /** Explicit `role`, or the implicit one of the tag (button, link, textbox, img, ...). */
  role: string;
  /** Why it is listed (element-facts.ts): a native control, a role, a click handler, a pointer cursor, ... */
  clickableBecause: ClickableBecause;
  /** Visible text, whitespace collapsed, at most 120 characters. */
  text: string;
  ariaLabel: string;
  /**
   * The name other elements give it, as a person reads it on or beside the control: the
   * text of its aria-labelledby targets and its <label>s (label[for] or wrapping); for a
   * checkbox or radio with neither, a sibling <label> drawn over it (custom checkboxes);
   * and, when it shows no text, the name of the icon it holds (an svg's aria-label,
   * title or <title>). Empty when it would only repeat `text`.
   */
  label: string;
  placeholder: string;
  title: string;
  alt: string;
  id: string;
  name: string;
  className: string;
  inputType: string;
  value: string;
  /**
   * Text around the element: the nearest enclosing box that holds noticeably more text
   * than the element itself (its card, row or form), so "the 'Add' button under the
   * daypack" can tell two 'Add' buttons apart. At most 200 characters.
   */
  context: string;
  /** The box of the element that `context` is read from (its card, row or form), when there is one. */
  contextBox?: ElementBox;
  /** Plain colour names of the background and the text ("" when transparent); an icon without text gives its fill's. */
  backgroundColor: string;
  textColor: string;
  /** Plain colour of the nearest painted box around it, below <body> ("inside the grey box"); "" when none. */
  boxColor: string;
  /** The picture it is or shows: "img", "svg", "canvas", "video", "background" (a CSS image), or "". */
  media: string;
  /** Words naming the icon it shows: icon classes, sprite ids, image file names (element-facts.ts). */
  iconWords: string;
  /** A circle or a pill. */
  round: boolean;
  /** Viewport coordinates, CSS pixels. */
  box: ElementBox;
  inViewport: boolean;
  disabled: boolean;
  /**
   * The harness's browser lists only these (browser-use's DOM walk, our reading of it):
   * `topMost` — when its centre is inside the viewport, the element hit there is this one
   * or inside it (elements whose centre is off-screen cannot be hit-tested and count);
   * `nearViewport` — its box reaches into the viewport grown by HARNESS_VIEWPORT_EXPANSION_PX.
   */
  topMost?: boolean;
  nearViewport?: boolean;
}

/** Everything that runs inside the page lives in this one function, so it is serialised once. */
export function collectInPage(args: { attribute: string; max: number; expansion: number }): InteractiveElement[] {
  const NATIVE = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "OPTION", "LABEL"]);
  const ROLES = new Set([
    "button",
    "link",
    "checkbox",
    "radio",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "switch",
    "textbox",
    "combobox",
    "searchbox",
    "slider",
    "spinbutton",
    "treeitem",
    "gridcell",
  ]);
  // Roles are tokens: "Button" and "button link" both mean a button.
  const roleToken = (el: Element): string => (el.getAttribute("role") ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  const implicitRole = (el: Element): string => {
    const explicit = roleToken(el);
    if (explicit) return explicit;
    switch (el.tagName) {
      case "A":
        return el.hasAttribute("href") ? "link" : "generic";
      case "BUTTON":
      case "SUMMARY":
        return "button";
      case "SELECT":
        return "combobox";
      case "TEXTAREA":
        return "textbox";
      case "OPTION":
        return "option";
      case "IMG":
        return "img";
      case "INPUT": {
        const type = (el.getAttribute("type") ?? "text").toLowerCase();
        if (["button", "submit", "reset", "image"].includes(type)) return "button";
        if (type === "checkbox" || type === "radio") return type;
        if (type === "range") return "slider";
        if (type === "search") return "searchbox";
        return "textbox";
      }
      default:
        return (el as HTMLElement).isContentEditable ? "textbox" : "generic";
    }
  };
  /** Why a user could act on it (element-facts.ts), or "" when nothing says so. */
  const clickableBecause = (el: Element, style: CSSStyleDeclaration): ClickableBecause | "" => {
    if (NATIVE.has(el.tagName)) return el.tagName === "INPUT" && (el as HTMLInputElement).type === "hidden" ? "" : "control";
    if (ROLES.has(roleToken(el))) return "role";
    if ((el as HTMLElement).isContentEditable && !(el.parentElement?.isContentEditable ?? false)) return "editable";
    if (hasClickHandler(el)) return "handler";
    const tabindex = el.getAttribute("tabindex");
    if (tabindex !== null && Number(tabindex) >= 0) return "tabindex";
    if (el.classList.contains("btn")) return "styled";
    // A pointer cursor marks a clickable the page wired in script; only the top of such a subtree counts.
    if (style.cursor === "pointer") {
      const parent = composedParent(el);
      if (!parent || getComputedStyle(parent).cursor !== "pointer") return "styled";
    }
    // The page's own root and body hear every click that bubbles: a listener there says nothing about one element.
    if (el !== document.documentElement && el !== document.body && hasClickListener(el)) return "listener";
    return "";
  };
  const clean = (text: string | null | undefined, max = 120): string => (text ?? "").replace(/\s+/g, " ").trim().slice(0, max);
  // innerText of a big container walks its whole subtree: read each ancestor once.
  const ancestorText = new Map<Element, string>();
  const textOf = (node: Element): string => {
    let text = ancestorText.get(node);
    if (text === undefined) {
      text = clean((node as HTMLElement).innerText, 400);
      ancestorText.set(node, text);
    }
    return text;
  };
  const boxOf = (rect: DOMRect): ElementBox => ({
    x: Math.round(rect.x),
    y: Math.round(rect.y),
    width: Math.round(rect.width),
    height: Math.round(rect.height),
  });
  const contextOf = (el: Element, ownText: string): { text: string; box?: ElementBox } => {
    let smaller: { text: string; box?: ElementBox } = { text: "" };
    let node = composedParent(el);
    for (let depth = 0; node && node !== document.body && depth < 6; depth++, node = composedParent(node)) {
      const text = textOf(node);
      if (text.length >= ownText.length + 15) return text.length < 400 ? { text: text.slice(0, 200), box: boxOf(node.getBoundingClientRect()) } : smaller;
      // A shadow host's innerText is blind to its shadow content: a shorter text is such a host, not more context.
      if (text.length >= smaller.text.length) smaller = { text: text.slice(0, 200), box: boxOf(node.getBoundingClientRect()) };
    }
    return smaller;
  };

  const hitsItself = (el: Element, rect: DOMRect): boolean => {
    const x = rect.left + rect.width / 2;
    const y = rect.top + rect.height / 2;
    if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) return true;
    const hit = deepElementFromPoint(x, y);
    return hit !== null && isWithin(hit, el);
  };

  const isShown = (el: Element): boolean => {
    const rect = el.getBoundingClientRect();
    return rect.width >= 1 && rect.height >= 1 && el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  };
  const isToggle = (el: Element): boolean => el.tagName === "INPUT" && ["checkbox", "radio"].includes((el as HTMLInputElement).type);
  const labelsOf = (el: Element): HTMLLabelElement[] => Array.from((el as HTMLInputElement).labels ?? []);
  /**
   * A label beside a checkbox that is not tied to it but drawn over it (TodoMVC's
   * `.toggle + label`): the box a person clicks is the invisible input, the words are the label's.
   */
  const coveringSiblingLabel = (el: Element, rect: DOMRect): HTMLLabelElement | undefined => {
    const area = rect.width * rect.height;
    for (const sibling of Array.from(el.parentNode?.children ?? [])) {
      if (sibling === el || sibling.tagName !== "LABEL" || (sibling as HTMLLabelElement).control) continue;
      const box = sibling.getBoundingClientRect();
      const overlap =
        Math.max(0, Math.min(rect.right, box.right) - Math.max(rect.left, box.left)) *
        Math.max(0, Math.min(rect.bottom, box.bottom) - Math.max(rect.top, box.top));
      if (area > 0 && overlap >= area / 2 && isShown(sibling)) return sibling as HTMLLabelElement;
    }
    return undefined;
  };
  /** A custom checkbox: the real input is transparent and a visible label stands for it (clicking either toggles it). */
  const hasStandInLabel = (el: Element, rect: DOMRect): boolean => isToggle(el) && (labelsOf(el).some(isShown) || coveringSiblingLabel(el, rect) !== undefined);
  /** Visible text of an element; an SVG has no innerText, and its textContent would hold <title>, <desc> and <style>. */
  const shownText = (el: Element): string => {
    if (el instanceof HTMLElement) return clean(el.innerText ?? el.textContent);
    if (el.tagName.toLowerCase() === "text") return clean(el.textContent);
    return clean(Array.from(el.querySelectorAll("text"), (text) => text.textContent ?? "").join(" "));
  };
  /** The name of the icon an element shows (or is): an svg's aria-label, title attribute or <title> child. */
  const iconName = (el: Element): string => {
    const icon = el.tagName.toLowerCase() === "svg" ? el : el.querySelector("svg");
    if (!icon) return "";
    const titleChild = Array.from(icon.children).find((child) => child.tagName.toLowerCase() === "title");
    // The element's own aria-label and title are already listed as themselves.
    const own = icon === el;
    return (own ? "" : clean(icon.getAttribute("aria-label")) || clean(icon.getAttribute("title"))) || clean(titleChild?.textContent);
  };
  const labelOf = (el: Element, rect: DOMRect, ownText: string): string => {
    const parts: string[] = [];
    const root = el.getRootNode() as Document | ShadowRoot;
    for (const id of (el.getAttribute("aria-labelledby") ?? "").split(/\s+/).filter(Boolean)) {
      const named = root.getElementById(id);
      if (named && named !== el) parts.push(shownText(named));
    }
    // A wrapping label's text holds the control's own (a select's options): only the rest names it.
    for (const label of labelsOf(el)) parts.push(label.contains(el) && ownText ? shownText(label).replace(ownText, " ") : shownText(label));
    if (parts.length === 0 && isToggle(el)) {
      const sibling = coveringSiblingLabel(el, rect);
      if (sibling) parts.push(shownText(sibling));
    }
    if (parts.length === 0 && !ownText) parts.push(iconName(el));
    const label = clean(parts.join(" "));
    return label === ownText ? "" : label;
  };

  /**
   * Every element under body in document order, each open shadow root's elements right
   * after their host (a closed root is out of reach, as it is for a user's tools). An
   * explicit stack: a hostile page may nest shadow roots deeper than the call stack.
   */
  const shadowRoots: ShadowRoot[] = [];
  const inComposedOrder = (body: HTMLElement): Element[] => {
    const ordered: Element[] = [];
    const pending: Array<{ elements: Element[]; next: number }> = [{ elements: Array.from(body.querySelectorAll("*")), next: 0 }];
    if (body.shadowRoot) {
      shadowRoots.push(body.shadowRoot);
      pending.push({ elements: Array.from(body.shadowRoot.querySelectorAll("*")), next: 0 });
    }
    while (pending.length > 0) {
      const scope = pending[pending.length - 1]!;
      const el = scope.elements[scope.next++];
      if (!el) {
        pending.pop();
        continue;
      }
      ordered.push(el);
      if (el.shadowRoot) {
        shadowRoots.push(el.shadowRoot);
        pending.push({ elements: Array.from(el.shadowRoot.querySelectorAll("*")), next: 0 });
      }
    }
    return ordered;
  };

  const all = document.body ? inComposedOrder(document.body) : [];
  for (const scope of [document, ...shadowRoots]) {
    for (const old of Array.from(scope.querySelectorAll(`[${args.attribute}]`))) old.removeAttribute(args.attribute);
  }
  const viewportWidth = window.innerWidth;
  const viewportHeight = window.innerHeight;
  const candidates: Array<{ el: Element; style: CSSStyleDeclaration; rect: DOMRect; because: ClickableBecause }> = [];
  for (const el of all) {
    if (candidates.length >= args.max * 2) break;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden" || style.visibility === "collapse") continue;
    const because = clickableBecause(el, style);
    if (!because) continue;
    const rect = el.getBoundingClientRect();
    if (rect.width < 1 || rect.height < 1) continue;
    if (Number(style.opacity) === 0 && !hasStandInLabel(el, rect)) continue;
    candidates.push({ el, style, rect, because });
  }
  // A listener on an element holding other controls is delegation (a list hearing its items' clicks): the controls are the targets.
  const listed = candidates.filter(
    (candidate) => candidate.because !== "listener" || !candidates.some((other) => other !== candidate && isWithin(other.el, candidate.el)),
  );
  const found: InteractiveElement[] = [];
  for (const { el, style, rect, because } of listed) {
    if (found.length >= args.max) break;
    const html = el as HTMLElement;
    const input = el as HTMLInputElement;
    const index = found.length;
    el.setAttribute(args.attribute, String(index));
    const text = shownText(el);
    const context = contextOf(el, text);
    const media = mediaOf(el, style, text);
    // An icon drawn in SVG shows its fill, not its text colour.
    const icon = media === "svg" ? (el.tagName.toLowerCase() === "svg" ? el : el.querySelector("svg")) : null;
    const iconFill = icon ? plainColourName(getComputedStyle(icon).fill) || plainColourName(getComputedStyle(icon).stroke) : "";
    found.push({
      index,
      tag: el.tagName.toLowerCase(),
      role: implicitRole(el),
      clickableBecause: because,
      text,
      context: context.text,
      ...(context.box ? { contextBox: context.box } : {}),
      ariaLabel: clean(el.getAttribute("aria-label")),
      label: labelOf(el, rect, text),
      placeholder: clean(el.getAttribute("placeholder")),
      title: clean(el.getAttribute("title")),
      alt: clean(el.getAttribute("alt") ?? el.querySelector("img[alt]")?.getAttribute("alt")),
      id: clean(el.id, 60),
      name: clean(el.getAttribute("name"), 60),
      // An SVG's className is an SVGAnimatedString; the attribute is the same words.
      className: clean(typeof html.className === "string" ? html.className : el.getAttribute("class"), 80),
      inputType: el.tagName === "INPUT" ? clean(input.type, 20) : "",
      value: el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" ? clean(input.value, 60) : "",
      backgroundColor: plainColourName(style.backgroundColor),
      textColor: (!text && iconFill) || plainColourName(style.color),
      boxColor: boxColourOf(el),
      media,
      iconWords: iconWordsOf(el, style),
      round: isRound(style, rect),
      box: boxOf(rect),
      inViewport: rect.bottom > 0 && rect.right > 0 && rect.top < viewportHeight && rect.left < viewportWidth,
      disabled: input.disabled === true || el.getAttribute("aria-disabled") === "true",
      topMost: hitsItself(el, rect),
      nearViewport:
        rect.bottom > -args.expansion &&
        rect.right > -args.expansion &&
        rect.top < viewportHeight + args.expansion &&
        rect.left < viewportWidth + args.expansion,
    });
  }
  return found;
}
