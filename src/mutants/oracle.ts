/**
 * What each executed step of a mutant deserves, Yes or No, from facts read in the page's
 * DOM (not from screenshots or OCR, so the judge is checked against something it does not
 * use): after every screenshot of the replay, the visible text, the form state, the class
 * names, the scroll position, and what each visible canvas holds (a drawing is not in the
 * DOM's text, and a game drawn on a canvas changes nothing else; a hidden canvas shows
 * nothing, as hidden text does not count either). The reference page is the ground truth; a mutant's step
 * deserves No when
 *   1. the mutant is frozen by then (freeze-after:k for steps ≥ k; lively-wrong always),
 *   2. the reference changed on that step and the mutant did not (nothing the assertion
 *      describes happened), or
 *   3. a literal the assertion names (assertionLiterals: quoted text, numbers in prose)
 *      is in the reference's text after the step but not in the mutant's (falsified),
 * and Yes otherwise.
 */
import type { Page } from "playwright";
import { assertionLiterals, normalizeText } from "../replay/grounding/description-text.ts";
import type { Action } from "../tasks/schema.ts";
import type { MutantSpec } from "./operators.ts";

export interface PageFacts {
  /** Visible text of the page and the values of its fields, whitespace collapsed. */
  text: string;
  /** Everything a step may change that shows: text, field values and checks, class names, scroll, visible canvases' drawings. */
  signature: string;
}

/** Runs in the page; self-contained. */
function readFactsInPage(): { text: string; signature: string } {
  // A visible canvas by a digest of its pixels, drawn onto a copy of ours of at most 320 ×
  // 320 with high-quality smoothing (every source pixel weighs in, so a thin line's move
  // still shows). A WebGL canvas drawn without preserveDrawingBuffer may read back blank
  // between frames: such a canvas then counts as unchanged.
  const copy = document.createElement("canvas");
  const copyContext = copy.getContext("2d", { willReadFrequently: true });
  const canvasDigest = (canvas: HTMLCanvasElement): string => {
    if (canvas.width === 0 || canvas.height === 0 || !canvas.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return "";
    if (!copyContext) return "?";
    const scale = Math.min(1, 320 / canvas.width, 320 / canvas.height);
    copy.width = Math.max(1, Math.round(canvas.width * scale));
    copy.height = Math.max(1, Math.round(canvas.height * scale));
    copyContext.imageSmoothingQuality = "high";
    try {
      copyContext.drawImage(canvas, 0, 0, copy.width, copy.height);
      const words = new Uint32Array(copyContext.getImageData(0, 0, copy.width, copy.height).data.buffer);
      let hash = 0x811c9dc5;
      for (const word of words) hash = Math.imul(hash ^ word, 0x01000193) >>> 0;
      return hash.toString(16);
    } catch (error) {
      // A canvas holding another origin's image cannot be read; anything else is named as it failed.
      return error instanceof DOMException && error.name === "SecurityError" ? "tainted" : `unreadable:${(error as Error).name}`;
    }
  };
  const fields = Array.from(document.querySelectorAll("input, textarea, select")).map((field) => {
    const input = field as HTMLInputElement;
    return `${input.type}:${input.value}:${input.checked ? 1 : 0}`;
  });
  const visible = (document.body?.innerText ?? "").replace(/\s+/g, " ").trim();
  const text = [visible, ...fields.map((field) => field.split(":")[1] ?? "")].join(" ");
  const classes = Array.from(document.querySelectorAll("[class]"))
    .map((element) => element.getAttribute("class") ?? "")
    .join("|");
  const details = Array.from(document.querySelectorAll("details"))
    .map((element) => ((element as HTMLDetailsElement).open ? 1 : 0))
    .join("");
  // At most 50 canvases: a page of hundreds of small ones is told apart by its text and classes well enough.
  const canvases = Array.from(document.querySelectorAll("canvas")).slice(0, 50).map(canvasDigest).join("|");
  return {
    text,
    signature: [visible, fields.join("|"), classes, details, Math.round(window.scrollX), Math.round(window.scrollY), canvases].join("\u0001"),
  };
}

/** A replay probe that keeps the page's facts after each screenshot, by screenshot index. */
export function factsProbe(facts: PageFacts[]): (index: number, page: Page) => Promise<void> {
  return async (index, page) => {
    const source = `(() => { const __name = (f) => f; return (${readFactsInPage.toString()})(); })()`;
    facts[index] = (await page.evaluate(source)) as PageFacts;
  };
}

export type DeservedVerdict = { verdict: "Yes" | "No"; why: string };

/** Whether a literal reads in a text (normalised; digits and letters as written). */
function contains(text: string, literal: string): boolean {
  const wanted = normalizeText(literal);
  return wanted === "" || ` ${normalizeText(text)} `.includes(` ${wanted} `);
}

/**
 * The verdict each step of the mutant deserves, for the steps it executed (the rest are
 * not judged: undefined). `reference` and `mutant` are facts by screenshot index: 0 the
 * initial state, i + 1 after action i.
 */
export function deservedVerdicts(options: {
  actions: readonly Action[];
  spec: MutantSpec;
  reference: readonly PageFacts[];
  mutant: readonly PageFacts[];
  executed: number;
}): Array<DeservedVerdict | undefined> {
  const { actions, spec, reference, mutant } = options;
  return actions.map((action, index): DeservedVerdict | undefined => {
    if (index >= options.executed || !action.logical_assertion.trim()) return undefined;
    if (spec.operator === "lively-wrong") return { verdict: "No", why: "input is swallowed from the start" };
    if (spec.operator === "freeze-after" && index >= (spec.parameter ?? 0)) return { verdict: "No", why: `frozen after ${spec.parameter} gesture(s)` };
    const [refBefore, refAfter, mutBefore, mutAfter] = [reference[index], reference[index + 1], mutant[index], mutant[index + 1]];
    if (!refBefore || !refAfter || !mutBefore || !mutAfter) return undefined;
    if (refBefore.signature !== refAfter.signature && mutBefore.signature === mutAfter.signature) {
      return { verdict: "No", why: "the reference changed on this step; the mutant did not" };
    }
    const { decisive, reported } = assertionLiterals(action.logical_assertion);
    const falsified = [...decisive, ...reported].filter((literal) => contains(refAfter.text, literal) && !contains(mutAfter.text, literal));
    if (falsified.length > 0)
      return { verdict: "No", why: `${falsified.map((literal) => `'${literal}'`).join(", ")} shown by the reference, not by the mutant` };
    return { verdict: "Yes", why: "behaves as the reference on this step" };
  });
}
