/**
 * Page mutants: graded wrong versions of a page, made from its HTML alone, so the
 * evaluator's and the self-check's verdicts can be checked against what each mutant is
 * known to deserve. Every operator works on any page: it adds one element at the top of
 * <head> (a script that runs before the page's own, a style, or a Content-Security-Policy)
 * and never parses or rewrites the page's own markup.
 *
 * Behaviour operators (what an interaction does):
 *   freeze-after:k   user input after the k-th gesture is swallowed (and scrolling locked)
 *   no-script        no script runs at all (CSP script-src 'none')
 *   lively-wrong     input is swallowed, but the element acted on visibly toggles an outline
 *   wrong-state      handlers run, but text an interaction changes is shown wrong
 *                    (its digits replaced, or its letters rotated when it has none)
 * Appearance operators (how the page looks; behaviour intact):
 *   text:p           a share p of the text nodes scrambled at load (rot13, digits +5)
 *   no-images        every image, video and CSS background image hidden
 *   layout-shift     the whole page moved and scaled a little
 *   restyle          colours rotated and every font replaced
 *
 * A "gesture" is a burst of trusted input events (pointerdown, keydown or a scroll)
 * after 300 ms of quiet: one click, one typed text, one key, one scroll.
 */
import { IwrError } from "../errors.ts";

export const MUTANT_OPERATORS = ["freeze-after", "no-script", "lively-wrong", "wrong-state", "text", "no-images", "layout-shift", "restyle"] as const;
export type MutantOperator = (typeof MUTANT_OPERATORS)[number];

export interface MutantSpec {
  operator: MutantOperator;
  /** freeze-after: the gestures allowed (k ≥ 0); text: the share scrambled (0 < p ≤ 1). */
  parameter?: number;
}

/** Quiet time that ends a gesture: replay actions are ≥ 0.5 s apart, a click's or a typed text's events far closer. */
const GESTURE_GAP_MS = 300;

/** "freeze-after:2", "text:0.3", "no-script" → a spec; anything else is a usage error naming it. */
export function parseMutantSpec(text: string): MutantSpec {
  const [name, value, ...rest] = text.trim().split(":");
  const operator = MUTANT_OPERATORS.find((candidate) => candidate === name);
  if (!operator || rest.length > 0) {
    throw new IwrError(
      "CONFIG_INVALID",
      `mutant operator '${text}': expected one of freeze-after:<k>, text:<p>, ` +
        `${MUTANT_OPERATORS.filter((op) => op !== "freeze-after" && op !== "text").join(", ")}`,
    );
  }
  if (operator === "freeze-after") {
    if (value === undefined || !/^\d+$/.test(value))
      throw new IwrError("CONFIG_INVALID", `mutant operator '${text}': freeze-after needs a gesture count, e.g. freeze-after:2`);
    return { operator, parameter: Number(value) };
  }
  if (operator === "text") {
    const share = Number(value);
    if (value === undefined || !Number.isFinite(share) || share <= 0 || share > 1)
      throw new IwrError("CONFIG_INVALID", `mutant operator '${text}': text needs a share in (0, 1], e.g. text:0.3`);
    return { operator, parameter: share };
  }
  if (value !== undefined) throw new IwrError("CONFIG_INVALID", `mutant operator '${text}': ${operator} takes no parameter`);
  return { operator };
}

/** The results folder name of a mutant: `mutant-<operator>[-<parameter>]`. */
export function mutantFolderName(spec: MutantSpec): string {
  return spec.parameter === undefined ? `mutant-${spec.operator}` : `mutant-${spec.operator}-${spec.parameter}`;
}

export function mutantLabel(spec: MutantSpec): string {
  return spec.parameter === undefined ? spec.operator : `${spec.operator}:${spec.parameter}`;
}

/**
 * Runs in the page before its own scripts. Serialised as source: self-contained, no
 * closures over module scope. `mode` picks the behaviour; nothing is done for others.
 */
function inputGuard(config: { mode: "freeze" | "lively" | "wrong-state"; allowed: number; gapMs: number }): void {
  const USER_EVENTS = [
    "pointerdown",
    "pointerup",
    "mousedown",
    "mouseup",
    "click",
    "dblclick",
    "contextmenu",
    "keydown",
    "keypress",
    "keyup",
    "beforeinput",
    "input",
    "change",
    "wheel",
    "touchstart",
    "touchend",
    "submit",
  ];
  let gestures = 0;
  let lastInputAt = -Infinity;
  let frozen = config.mode === "lively" || (config.mode === "freeze" && config.allowed === 0);
  let freezeTimer: ReturnType<typeof setTimeout> | undefined;
  const lockScrolling = (): void => {
    for (const element of [document.documentElement, document.body]) {
      if (element) element.style.setProperty("overflow", "hidden", "important");
    }
    // A script's own scrolling too (the evaluator scrolls with window.scrollBy): overflow alone allows it.
    const still = (): void => undefined;
    for (const name of ["scrollBy", "scrollTo", "scroll"] as const) {
      Object.defineProperty(window, name, { value: still, configurable: true, writable: true });
      Object.defineProperty(Element.prototype, name, { value: still, configurable: true, writable: true });
    }
  };
  const startsGesture = (event: Event): boolean =>
    event.type === "pointerdown" || event.type === "mousedown" || event.type === "keydown" || event.type === "scroll";
  const noteInput = (event: Event): void => {
    const now = performance.now();
    if (startsGesture(event) && now - lastInputAt > config.gapMs) gestures += 1;
    lastInputAt = now;
    if (config.mode === "freeze" && !frozen && gestures >= config.allowed) {
      // The k-th gesture runs to its end; the page freezes once it has been quiet a while.
      if (freezeTimer !== undefined) clearTimeout(freezeTimer);
      freezeTimer = setTimeout(() => {
        frozen = true;
        lockScrolling();
      }, config.gapMs);
    }
  };
  const toggleOutline = (element: Element | null): void => {
    if (!(element instanceof HTMLElement)) return;
    const on = element.dataset.iwrMutantOutline === "1";
    element.dataset.iwrMutantOutline = on ? "0" : "1";
    if (on) element.style.removeProperty("outline");
    else element.style.setProperty("outline", "3px solid #e91e63", "important");
  };
  const guard = (event: Event): void => {
    if (!event.isTrusted) return;
    noteInput(event);
    if (!frozen) return;
    if (config.mode === "lively") {
      if (event.type === "pointerdown") toggleOutline(event.target instanceof Element ? event.target : null);
      if (event.type === "keydown") toggleOutline(document.activeElement);
    }
    event.stopImmediatePropagation();
    event.preventDefault();
  };
  for (const type of USER_EVENTS) window.addEventListener(type, guard, { capture: true });
  window.addEventListener("scroll", (event) => event.isTrusted && noteInput(event), { capture: true, passive: true });
  if (frozen) {
    if (document.body) lockScrolling();
    else document.addEventListener("DOMContentLoaded", lockScrolling);
  }

  if (config.mode !== "wrong-state") return;
  // Text an interaction changes is shown wrong: digits shifted by 5, or letters rotated.
  const written = new WeakMap<Node, string>();
  const falsify = (text: string): string =>
    /\d/.test(text)
      ? text.replace(/\d/g, (digit) => String((Number(digit) + 5) % 10))
      : text.replace(/[A-Za-z]/g, (letter) => {
          const base = letter <= "Z" ? 65 : 97;
          return String.fromCharCode(((letter.charCodeAt(0) - base + 13) % 26) + base);
        });
  const falsifyNode = (node: Node): void => {
    if (node.nodeType !== Node.TEXT_NODE) {
      node.childNodes.forEach(falsifyNode);
      return;
    }
    const text = node.nodeValue ?? "";
    if (!text.trim() || written.get(node) === text) return;
    const wrong = falsify(text);
    written.set(node, wrong);
    node.nodeValue = wrong;
  };
  const inputValues = new WeakMap<HTMLInputElement | HTMLTextAreaElement, string>();
  const falsifyValues = (): void => {
    for (const field of Array.from(document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>("input, textarea"))) {
      const before = inputValues.get(field);
      if (before === undefined) {
        inputValues.set(field, field.value);
      } else if (field.value !== before && field !== document.activeElement) {
        // A value the page set (a display), not one the user is typing into.
        field.value = falsify(field.value);
        inputValues.set(field, field.value);
      }
    }
  };
  // What the user types is theirs, not the page's: it is recorded as the field's value, so
  // it is never falsified once focus moves on. (Falsified then, a page that reads the field
  // on the next click would copy the wrong text and show it falsified again, i.e. right:
  // letters rotated twice. Whether that happened hung on when the timers below ran.)
  document.addEventListener(
    "input",
    (event) => {
      const field = event.target;
      if (event.isTrusted && (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)) inputValues.set(field, field.value);
    },
    { capture: true },
  );
  const start = (): void => {
    falsifyValues();
    new MutationObserver((records) => {
      // Only what changes after an interaction: what the page draws at load stays as it is.
      if (gestures === 0) return;
      for (const record of records) {
        if (record.type === "characterData") falsifyNode(record.target);
        else record.addedNodes.forEach(falsifyNode);
      }
    }).observe(document.documentElement, { subtree: true, childList: true, characterData: true });
    for (const type of ["click", "keyup", "input", "change"]) {
      document.addEventListener(type, (event) => {
        if (event.isTrusted) for (const ms of [0, 60, 250]) setTimeout(falsifyValues, ms);
      });
    }
  };
  if (document.documentElement) start();
  else document.addEventListener("DOMContentLoaded", start);
}

/** Scrambles a share of the page's text nodes once it is parsed (deterministic: by node order). */
function scrambleText(config: { share: number }): void {
  const scramble = (text: string): string =>
    text
      .replace(/[A-Za-z]/g, (letter) => {
        const base = letter <= "Z" ? 65 : 97;
        return String.fromCharCode(((letter.charCodeAt(0) - base + 13) % 26) + base);
      })
      .replace(/\d/g, (digit) => String((Number(digit) + 5) % 10));
  const run = (): void => {
    const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT);
    const nodes: Text[] = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!node.nodeValue?.trim() || !parent || ["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"].includes(parent.tagName)) continue;
      nodes.push(node as Text);
    }
    // Every node whose running share crosses a whole step: exactly round(share × n) of n, spread evenly.
    nodes.forEach((node, index) => {
      if (Math.floor((index + 1) * config.share) > Math.floor(index * config.share)) node.nodeValue = scramble(node.nodeValue ?? "");
    });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
}

function scriptElement(fn: (config: never) => void, config: unknown): string {
  // As source text, with a no-op `__name` (tsx wraps inner functions in that helper, absent in the page).
  const source = `(() => { const __name = (f) => f; (${fn.toString()})(${JSON.stringify(config)}); })();`;
  return `<script data-iwr-mutant>${source.replace(/<\/script/gi, "<\\/script")}</script>`;
}

const STYLES: Partial<Record<MutantOperator, string>> = {
  "no-images": "img, picture, video, canvas, svg image, object, embed { visibility: hidden !important; } * { background-image: none !important; }",
  "layout-shift": "body { transform: translate(44px, 30px) scale(0.95) !important; transform-origin: 0 0 !important; }",
  restyle:
    "html { filter: hue-rotate(150deg) saturate(1.6) !important; } " +
    "* { font-family: 'DejaVu Serif', 'Liberation Serif', Georgia, serif !important; letter-spacing: 0.04em !important; }",
};

/** What the operator puts at the top of <head>. */
function injection(spec: MutantSpec): string {
  switch (spec.operator) {
    case "no-script":
      return `<meta http-equiv="Content-Security-Policy" content="script-src 'none'">`;
    case "freeze-after":
      return scriptElement(inputGuard, { mode: "freeze", allowed: spec.parameter ?? 0, gapMs: GESTURE_GAP_MS });
    case "lively-wrong":
      return scriptElement(inputGuard, { mode: "lively", allowed: 0, gapMs: GESTURE_GAP_MS });
    case "wrong-state":
      return scriptElement(inputGuard, { mode: "wrong-state", allowed: 0, gapMs: GESTURE_GAP_MS });
    case "text":
      return scriptElement(scrambleText, { share: spec.parameter ?? 0.3 });
    default:
      return `<style data-iwr-mutant>${STYLES[spec.operator] ?? ""}</style>`;
  }
}

/**
 * The mutant of `html`: the operator's element placed first in <head> (after <html> or
 * at the very start when the page has neither), so it acts before anything of the page.
 */
export function mutatePage(html: string, spec: MutantSpec): string {
  const element = injection(spec);
  const head = /<head\b[^>]*>/i.exec(html);
  if (head) return `${html.slice(0, head.index + head[0].length)}${element}${html.slice(head.index + head[0].length)}`;
  const root = /<html\b[^>]*>/i.exec(html);
  if (root) return `${html.slice(0, root.index + root[0].length)}<head>${element}</head>${html.slice(root.index + root[0].length)}`;
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  if (doctype) return `${doctype[0]}${element}${html.slice(doctype[0].length)}`;
  return `${element}${html}`;
}
