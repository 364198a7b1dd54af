/**
 * Reading what an assertion names on a screenshot with OCR, the way the offline judge
 * needs it: a literal matched against OCR text with the misreads OCR makes (letters may
 * slip, digits may not; operator signs read as their look-alikes), and the screen read in
 * passes — whole, each changed region cut out, prepared (crop-preparation.ts: stretched,
 * its dark areas inverted) and enlarged (where small or light-on-dark UI text is read far
 * more reliably; the true page's screens, truth-change.ts), and the whole screen enlarged —
 * each reading done once per screen.
 */
import { distance } from "fastest-levenshtein";
import sharp from "sharp";
import { decodedPixels } from "../../metrics/decoded-pictures.ts";
import { readDerivedImageText, readImageText } from "../../metrics/ocr.ts";
import type { Region } from "../../metrics/pixel-diff.ts";
import { normalizeText } from "../../replay/grounding/description-text.ts";
import { CROP_PREPARATION, prepareCrop } from "./crop-preparation.ts";

export const OCR_READING_SETTINGS = Object.freeze({
  /** A literal counts as read when some OCR window is at least this similar (OCR misreads letters). */
  literalSimilarity: 0.8,
  /**
   * Something on a screen resembles a literal when a window of its OCR text is at least this
   * similar: a copy OCR garbled (a few letters dropped or misread) stands where the literal
   * does. Below the match threshold, above where another line sharing the literal's first
   * words falls (about 0.6); a label differing in one short state word ("Task deleted" for
   * "Task completed", 0.71) counts as a copy too, which only ever makes a literal look new
   * less often. Used to count what a screen already showed (resemblances).
   */
  resemblance: 0.7,
  /** Literals this short must be read exactly (fuzzy matching a "3" means nothing). */
  exactBelowChars: 4,
  /**
   * Regions up to this tall (screen pixels) are read as one block of text (Tesseract's
   * automatic page mode reads nothing from a lone digit or word); taller ones in bands of
   * this height, each prepared on its own, so light text on a dark band is inverted and read.
   */
  bandHeight: 200,
});

/** What OCR may read for an operator sign: × as x or *, − as a dash of any kind, ÷ as + or /. */
const SIGN_READINGS: Record<string, string> = {
  "×": "[x×*✕]",
  "*": "[x×*✕]",
  x: "[x×*✕]",
  "−": "[-−–—~_]",
  "-": "[-−–—~_]",
  "–": "[-−–—~_]",
  "—": "[-−–—~_]",
  "÷": "[÷+/:=]",
  "/": "[/÷|]",
  "+": "[+÷]",
  "=": "[=]",
};
const GAP = "[^\\p{L}\\p{N}]*";

/**
 * For a literal made of numbers and signs ('$9,873', '1 / 8', '12 ×', '56 ÷ 0 = error'
 * is not one: it has a word), a pattern for its reading in OCR text: the digit groups in
 * order, each operator sign where it stands (so '12 ×' is not just '12'), other
 * punctuation free; OCR often glues a number to the next word ("1items"), so only other
 * digits may not touch it. Undefined for literals with letters.
 */
function numberPattern(literal: string): RegExp | undefined {
  if (!/^\d+( \d+)*$/.test(normalizeText(literal))) return undefined;
  const tokens = literal.trim().match(/\d+|[×*x−\-–—÷/+=]|[^\d×*x−\-–—÷/+=]+/gu) ?? [];
  let source = "";
  let pendingGap = false;
  for (const token of tokens) {
    if (/^\d+$/.test(token)) {
      source += `${pendingGap || source ? GAP : ""}${token}`;
      pendingGap = false;
    } else if (SIGN_READINGS[token]) {
      source += `${GAP}${SIGN_READINGS[token]}`;
      pendingGap = true;
    } else {
      pendingGap = pendingGap || source !== "";
    }
  }
  return new RegExp(`(?<!\\p{N})${source}(?!\\p{N})`, "gu");
}

/** Similarity of a window of OCR words to a wanted text (0 when their digits differ: letters may be misread, digits may not). */
function windowSimilarity(window: string, wanted: string): number {
  const digitsOf = (value: string) => value.replace(/\D/g, "");
  if (digitsOf(window) !== digitsOf(wanted)) return 0;
  return 1 - distance(window, wanted) / Math.max(window.length, wanted.length);
}

/** The word counts of the OCR windows a literal of `span` words is compared with (a word may be split or joined). */
function windowLengths(span: number): number[] {
  return [Math.max(1, span - 1), span, span + 1].filter((length, index, all) => all.indexOf(length) === index);
}

/** Best similarity of `literal` to any run of OCR words of about its length (1 = read exactly). */
export function literalSimilarity(literal: string, ocrText: string): number {
  const wanted = normalizeText(literal);
  const text = normalizeText(ocrText);
  if (!wanted) return 1;
  const numbers = numberPattern(literal);
  if (numbers) return numbers.test(ocrText.toLowerCase()) ? 1 : 0;
  if (` ${text} `.includes(` ${wanted} `)) return 1;
  if (wanted.length < OCR_READING_SETTINGS.exactBelowChars) return 0;
  const ocrWords = text ? text.split(" ") : [];
  const span = wanted.split(" ").length;
  let best = 0;
  for (const length of windowLengths(span)) {
    for (let start = 0; start + length <= ocrWords.length; start++) {
      best = Math.max(best, windowSimilarity(ocrWords.slice(start, start + length).join(" "), wanted));
    }
  }
  return best;
}

/**
 * A region cut out of the screen and prepared for OCR (crop-preparation.ts), enlarged
 * `scale` times: Tesseract reads best at one text size, which a region's is not known to
 * be, so callers try more than one. Cut from the screen's pixels, decoded once for all
 * its crops and the other engines (decoded-pictures.ts).
 */
async function regionForOcr(screenPng: Buffer, region: Region, scale: number): Promise<Buffer> {
  const screen = await decodedPixels(screenPng);
  const { data, info } = await sharp(screen.data, { raw: screen.info }).extract(region).removeAlpha().greyscale().raw().toBuffer({ resolveWithObject: true });
  return prepareCrop(data, { width: info.width, height: info.height }, scale);
}

/**
 * Every value, once every reading has ended; the first failure if any failed. Unlike
 * Promise.all it does not answer while sibling readings still run: the caller's task may
 * end on that answer (and shut OCR down), and a reading asked for after that would start
 * the OCR workers again.
 */
export async function allReadings<T extends readonly unknown[] | []>(readings: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = (await Promise.allSettled(readings)) as unknown as Array<PromiseSettledResult<unknown>>;
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/** One crop's text, prepared and read once per screen content, region and scale. */
function readCrop(screenPng: Buffer, region: Region, scale: number, layout: "page" | "block"): Promise<string> {
  const recipe = `${CROP_PREPARATION}; ${region.left},${region.top} ${region.width}x${region.height} at ${scale}`;
  return readDerivedImageText(screenPng, recipe, () => regionForOcr(screenPng, region, scale), { layout });
}

/**
 * A region's text: one block when it is short, else band by band (see
 * OCR_READING_SETTINGS.bandHeight), each band read as a page or, for the last pass
 * over a whole screen, as a block (which also reads a lone display digit or a faint line).
 */
async function readRegion(screenPng: Buffer, region: Region, scale: number, bandLayout: "page" | "block" = "page"): Promise<string> {
  const band = OCR_READING_SETTINGS.bandHeight;
  if (region.height <= band) return readCrop(screenPng, region, scale, "block");
  const overlap = 24;
  const bands: Region[] = [];
  for (let top = region.top; top < region.top + region.height - overlap; top += band - overlap) {
    bands.push({ left: region.left, top, width: region.width, height: Math.min(band, region.top + region.height - top) });
  }
  // Every band is needed: read side by side (one OCR worker each), joined in order.
  const texts = await allReadings(bands.map((part) => readCrop(screenPng, part, scale, bandLayout)));
  return texts.join(" ");
}

/** How many times a literal reads in a text (non-overlapping windows at or above the threshold). */
export function occurrences(literal: string, text: string): number {
  if (literalSimilarity(literal, text) < OCR_READING_SETTINGS.literalSimilarity) return 0;
  const numbers = numberPattern(literal);
  if (numbers) return (text.toLowerCase().match(numbers) ?? []).length;
  const wanted = normalizeText(literal);
  const normalized = ` ${normalizeText(text)} `;
  if (wanted && normalized.includes(` ${wanted} `)) return normalized.split(` ${wanted} `).length - 1;
  return 1;
}

/**
 * How many places in a text resemble a literal: what a screen already showed of it,
 * counting the copies OCR garbled, which occurrences() does not. Greedy, left to right: at
 * the first word where a window of about the literal's length is at least
 * OCR_READING_SETTINGS.resemblance similar, count one and go on after the shortest such
 * window. Short literals and numbers have no near readings: for them it is occurrences().
 */
export function resemblances(literal: string, text: string): number {
  const wanted = normalizeText(literal);
  if (numberPattern(literal) || wanted.length < OCR_READING_SETTINGS.exactBelowChars) return occurrences(literal, text);
  const normalized = normalizeText(text);
  const ocrWords = normalized ? normalized.split(" ") : [];
  const lengths = windowLengths(wanted.split(" ").length);
  let count = 0;
  for (let start = 0; start < ocrWords.length; ) {
    const alike = lengths.filter(
      (length) =>
        start + length <= ocrWords.length && windowSimilarity(ocrWords.slice(start, start + length).join(" "), wanted) >= OCR_READING_SETTINGS.resemblance,
    );
    if (alike.length === 0) {
      start += 1;
      continue;
    }
    count += 1;
    start += Math.min(...alike);
  }
  return count;
}

/** Lazily read OCR texts of the two screens: whole, and any region (the true page's changed regions, an enlarged whole screen). */
export class ScreenReadings {
  private readonly regionTexts = new Map<string, Promise<string>>();
  private readonly pictures: Record<"before" | "after", Buffer>;
  constructor(before: Buffer, after: Buffer) {
    this.pictures = { before, after };
  }
  readonly afterText = () => readImageText(this.pictures.after);
  readonly beforeText = () => readImageText(this.pictures.before);
  /** The text of a region on one screen, prepared and enlarged; each read once. */
  region(which: "before" | "after", region: Region, scale: number, bandLayout: "page" | "block" = "page"): Promise<string> {
    const key = `${which}:${region.left},${region.top},${region.width},${region.height}@${scale}:${bandLayout}`;
    let text = this.regionTexts.get(key);
    if (!text) {
      text = readRegion(this.pictures[which], region, scale, bandLayout);
      this.regionTexts.set(key, text);
    }
    return text;
  }
  /** Every text read so far of the new screen, for the record. */
  async afterTexts(): Promise<string[]> {
    const regional = await Promise.all([...this.regionTexts.entries()].filter(([key]) => key.startsWith("after:")).map(([, text]) => text));
    return [await this.afterText(), ...regional];
  }
}
