/**
 * An assertion's literals on a candidate's screen text (src/browser/screen-text.ts, read
 * from the page's DOM as a person reads the screen): whether a literal is shown, how
 * often, and where. Field values and a select's chosen option count as shown; placeholders
 * only when nothing else names the literal.
 */
import type { ScreenBox, ScreenText } from "../../browser/screen-text.ts";
import type { Region } from "../../metrics/pixel-diff.ts";
import { normalizeText } from "../../replay/grounding/description-text.ts";
import { literalSimilarity, OCR_READING_SETTINGS, occurrences } from "./ocr-reading.ts";

/** Every run of text on the screen, in reading order (top to bottom, left to right), with where it stands. */
function runsOf(screen: ScreenText): Array<{ text: string; box: ScreenBox }> {
  const runs = [
    ...screen.items.filter((item) => item.kind !== "placeholder"),
    ...screen.controls.filter((control) => control.label).map((control) => ({ text: control.label, box: control.box })),
  ];
  return runs.sort((a, b) => a.box.y - b.box.y || a.box.x - b.box.x);
}

/** The screen's text as one reading (runs joined in reading order), for literalSimilarity and occurrences. */
export function screenTextReading(screen: ScreenText): string {
  return screen.items
    .filter((item) => item.kind !== "placeholder")
    .sort((a, b) => a.box.y - b.box.y || a.box.x - b.box.x)
    .map((item) => item.text)
    .join(" \n ");
}

/** Punctuation between letters or digits ("ada.lovelace@mail.org", "v2.1", "12:30"): it is part of what the literal says. */
const INNER_PUNCTUATION = /[\p{L}\p{N}][^\p{L}\p{N}\s]+[\p{L}\p{N}]/u;

/** Lower case, whitespace collapsed, punctuation kept. */
const asWritten = (text: string) => text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();

/**
 * How well the screen shows `literal` (1 = exactly), as literalSimilarity scores an OCR
 * reading. The screen text is exact, so a literal whose punctuation carries meaning (an
 * address, a version, a time) must be shown as written: one that the screen shows with
 * other punctuation ("ada_lovelace@mail.org" for "ada.lovelace@mail.org") scores 0, and
 * `contradicted` says so (no OCR reading can make it right).
 */
export function similarityOnScreen(literal: string, screen: ScreenText): { similarity: number; contradicted: boolean } {
  const reading = screenTextReading(screen);
  const similarity = literalSimilarity(literal, reading);
  if (similarity < OCR_READING_SETTINGS.literalSimilarity || !INNER_PUNCTUATION.test(literal)) return { similarity, contradicted: false };
  const exact = asWritten(reading).includes(asWritten(literal));
  return exact ? { similarity: 1, contradicted: false } : { similarity: 0, contradicted: true };
}

/** How many times the screen shows `literal`. */
export function occurrencesOnScreen(literal: string, screen: ScreenText): number {
  return occurrences(literal, screenTextReading(screen));
}

/** Where the screen shows `literal`: the boxes of the runs (and control labels) that hold it. */
export function boxesOf(literal: string, screen: ScreenText): ScreenBox[] {
  const wanted = normalizeText(literal);
  if (!wanted) return [];
  return runsOf(screen)
    .filter((run) => ` ${normalizeText(run.text)} `.includes(` ${wanted} `) || literalSimilarity(literal, run.text) >= OCR_READING_SETTINGS.literalSimilarity)
    .map((run) => run.box);
}

/**
 * Whether a named thing's box stands where a region changed: on the same line within
 * `reach.x` (a radio's dot or a field beside its label), or right above or below it
 * (a label over its field) within `reach.y`, overlapping it across.
 */
export function near(box: ScreenBox, region: Region, reach: { x: number; y: number }): boolean {
  const gapX = Math.max(0, region.left - (box.x + box.width), box.x - (region.left + region.width));
  const gapY = Math.max(0, region.top - (box.y + box.height), box.y - (region.top + region.height));
  const overlapY = Math.min(box.y + box.height, region.top + region.height) - Math.max(box.y, region.top);
  const sameLine = overlapY >= 0.5 * Math.min(box.height, region.height);
  if (sameLine) return gapX <= reach.x;
  return gapX === 0 && gapY <= reach.y;
}
