/**
 * What changed between two pictures of a page, in terms that do not depend on where the
 * page put things or how it styled them, so that two different pages' changes can be
 * compared: the words a picture gained over another (up to OCR slips), and the cells of a
 * coarse grid where the pixels changed. The self-check compares a candidate's change with
 * the video's (src/selfcheck/step-evidence.ts); the offline judge compares it with the
 * true page's (src/evaluator/judge/).
 */

import { PIXEL_TOLERANCE } from "./pixel-diff.ts";

/** Grid over the 640 × 360 grey pictures: 32 × 18 cells of 20 px (40 px of the screen). */
export const CELL = 20;
/** A cell changed when this many of its 400 pixels did (a caret or antialiasing noise stays below). */
const CELL_CHANGED_PIXELS = 6;
/** How far apart (in cells) two changes may be and still be the same change. */
const CELL_SLACK = 2;
/**
 * Lower-cased words of four or more letters, and numbers; OCR punctuation dropped.
 * Shorter letter runs are left out: on a video frame they are mostly OCR's readings of
 * icons, borders and compression noise ("pat", "tha"), and a change worth checking
 * rarely shows only short words.
 */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/\p{L}{4,}|\p{N}+(?:[.,:]\p{N}+)*/gu) ?? []).map((word) => word.replace(/,/g, ""));
}

/**
 * Whether two strings are at most one edit apart (Levenshtein distance ≤ 1, in UTF-16
 * code units), in one pass: the alignment asks this of every pair of words on two screens
 * many times over, where a full edit-distance table per pair was most of a self-check's time.
 */
function withinOneEdit(a: string, b: string): boolean {
  const lengthGap = a.length - b.length;
  if (lengthGap > 1 || lengthGap < -1) return false;
  const shorter = Math.min(a.length, b.length);
  let i = 0;
  while (i < shorter && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === shorter) return true;
  if (lengthGap === 0) return a.slice(i + 1) === b.slice(i + 1);
  return lengthGap > 0 ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

export const isNumber = (word: string) => /\d/.test(word);

/**
 * The same word as read by OCR from two pictures: numbers exactly; words with one slip
 * allowed, or one inside the other (OCR of a frame glues neighbours: "expandall").
 */
export function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  if (isNumber(a) || isNumber(b)) return false;
  return withinOneEdit(a, b) || a.includes(b) || b.includes(a);
}

/**
 * Words of `after` not matched one-to-one by words of `before` (a multiset difference up
 * to OCR slips). Each word of `after`, in order, takes the first untaken equal word of
 * `before`, else the first untaken one it is the same word as (sameWord).
 */
export function gainedWords(after: readonly string[], before: readonly string[]): string[] {
  const taken = new Uint8Array(before.length);
  // Where each word stands in `before`, in order, and how many of those places are known taken.
  const places = new Map<string, { at: number[]; next: number }>();
  before.forEach((word, index) => {
    const entry = places.get(word);
    if (entry) entry.at.push(index);
    else places.set(word, { at: [index], next: 0 });
  });
  const firstEqual = (word: string): number => {
    const entry = places.get(word);
    if (!entry) return -1;
    while (entry.next < entry.at.length && taken[entry.at[entry.next]!]) entry.next += 1;
    return entry.next < entry.at.length ? entry.at[entry.next]! : -1;
  };
  const firstAlike = (word: string): number => {
    // A number is only the same word as itself, which firstEqual looked for.
    if (isNumber(word)) return -1;
    for (let index = 0; index < before.length; index++) if (!taken[index] && sameWord(word, before[index]!)) return index;
    return -1;
  };
  const gained: string[] = [];
  for (const word of after) {
    const equal = firstEqual(word);
    const match = equal >= 0 ? equal : firstAlike(word);
    if (match >= 0) taken[match] = 1;
    else gained.push(word);
  }
  return gained;
}

/** Share of `words` that `among` shows too (up to OCR slips); equal words are looked up, not compared one by one. */
export function shareFound(words: readonly string[], among: readonly string[]): number {
  if (words.length === 0) return 0;
  const exact = new Set(among);
  const found = words.filter((word) => exact.has(word) || (!isNumber(word) && among.some((other) => sameWord(word, other))));
  return found.length / words.length;
}

/** The darkest and lightest grey among each pixel of a grey picture and its eight neighbours. */
export interface ShiftRange {
  low: Uint8Array;
  high: Uint8Array;
}

/** A grey picture, `width` wide, with its ShiftRange worked out once (it is compared with many others). */
export interface GreyPicture {
  pixels: Buffer;
  shiftRange: ShiftRange;
}

/**
 * The ShiftRange of a grey picture. sharp's erode and dilate are binary (they map grey to
 * 0 or 255), so the 3 × 3 minimum and maximum are taken here, separably: over each row's
 * three neighbours, then over three such rows.
 */
export function shiftRangeOf(pixels: Buffer, width: number): ShiftRange {
  const height = Math.floor(pixels.length / width);
  const rowLow = new Uint8Array(pixels.length);
  const rowHigh = new Uint8Array(pixels.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const left = pixels[x > 0 ? i - 1 : i]!;
      const right = pixels[x < width - 1 ? i + 1 : i]!;
      const value = pixels[i]!;
      rowLow[i] = Math.min(left, value, right);
      rowHigh[i] = Math.max(left, value, right);
    }
  }
  const range = { low: new Uint8Array(pixels.length), high: new Uint8Array(pixels.length) };
  for (let y = 0; y < height; y++) {
    const up = y > 0 ? -width : 0;
    const down = y < height - 1 ? width : 0;
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      range.low[i] = Math.min(rowLow[i + up]!, rowLow[i]!, rowLow[i + down]!);
      range.high[i] = Math.max(rowHigh[i + up]!, rowHigh[i]!, rowHigh[i + down]!);
    }
  }
  return range;
}

/** A grey picture ready for forEachDifferingPixel. */
export const greyPicture = (pixels: Buffer, width = 640): GreyPicture => ({ pixels, shiftRange: shiftRangeOf(pixels, width) });

/**
 * Calls `visit` with each pixel where two grey pictures (same size, `width` wide) differ
 * beyond a shift of one pixel: a pixel differs when either picture's grey there lies
 * outside the range of the other picture's pixel and its eight neighbours, widened by the
 * tolerance. A page scrolled or laid out one pixel (two screen pixels) differently, or a
 * video frame caught while a scroll settled, is the same picture; a new word is not,
 * because its dark strokes lie outside the range of the old picture's background (the
 * test runs both ways).
 */
export function forEachDifferingPixel(a: GreyPicture, b: GreyPicture, width: number, visit: (index: number, x: number, y: number) => void): void {
  const [pixelsA, pixelsB, rangeA, rangeB] = [a.pixels, b.pixels, a.shiftRange, b.shiftRange];
  // Pictures of different sizes, or not whole rows, have no pixel to pixel comparison (their callers say so).
  if (pixelsA.length !== pixelsB.length || pixelsA.length === 0 || pixelsA.length % width !== 0) return;
  for (let i = 0; i < pixelsA.length; i++) {
    const valueA = pixelsA[i]!;
    const valueB = pixelsB[i]!;
    // Most pixels are equal where they stand: the neighbourhoods are looked at only for the rest.
    if (Math.abs(valueA - valueB) <= PIXEL_TOLERANCE) continue;
    const aOutsideB = valueA < rangeB.low[i]! - PIXEL_TOLERANCE || valueA > rangeB.high[i]! + PIXEL_TOLERANCE;
    if (aOutsideB || valueB < rangeA.low[i]! - PIXEL_TOLERANCE || valueB > rangeA.high[i]! + PIXEL_TOLERANCE) visit(i, i % width, Math.floor(i / width));
  }
}

/**
 * Indices of the grid cells where two grey pictures (same size) differ beyond a one-pixel
 * shift. The counts per cell live in a typed array: the self-check asks this of many pairs
 * of a video's states, and with a map updated at every differing pixel it took half as long
 * again (1,521 pairs of the bundled videos' states: 5.1–5.5 s against 3.4–3.5 s, same cells).
 */
export function changedCells(a: GreyPicture, b: GreyPicture, width = 640): Set<number> {
  const cells = new Set<number>();
  const columns = Math.ceil(width / CELL);
  const rows = Math.ceil(a.pixels.length / width / CELL);
  const counts = new Uint16Array(columns * rows);
  forEachDifferingPixel(a, b, width, (_, x, y) => {
    const cell = Math.floor(y / CELL) * columns + Math.floor(x / CELL);
    counts[cell] = counts[cell]! + 1;
    if (counts[cell] === CELL_CHANGED_PIXELS) cells.add(cell);
  });
  return cells;
}

function nearAny(cell: number, others: ReadonlySet<number>, columns: number): boolean {
  const row = Math.floor(cell / columns);
  const column = cell % columns;
  for (let dy = -CELL_SLACK; dy <= CELL_SLACK; dy++) {
    for (let dx = -CELL_SLACK; dx <= CELL_SLACK; dx++) {
      const c = column + dx;
      if (c < 0 || c >= columns) continue;
      if (others.has((row + dy) * columns + c)) return true;
    }
  }
  return false;
}

/** F1 of two changed-cell sets, a cell matched when the other set has one within CELL_SLACK. */
export function changeOverlap(page: ReadonlySet<number>, video: ReadonlySet<number>, width = 640): number | undefined {
  if (page.size === 0 && video.size === 0) return undefined;
  if (page.size === 0 || video.size === 0) return 0;
  const columns = Math.ceil(width / CELL);
  const precision = [...page].filter((cell) => nearAny(cell, video, columns)).length / page.size;
  const recall = [...video].filter((cell) => nearAny(cell, page, columns)).length / video.size;
  return precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
}

/**
 * The plain name a person gives an sRGB colour: black, white or gray when it is nearly
 * colourless, else its hue's name (red, orange, yellow, green, teal, blue, purple, pink),
 * dark orange being brown. Light tints keep their hue's name (antialiased edges of a green
 * tick are light green, not gray).
 */
export function colourName(r: number, g: number, b: number): string {
  const max = Math.max(r, g, b) / 255;
  const min = Math.min(r, g, b) / 255;
  const lightness = (max + min) / 2;
  const chroma = max - min;
  if (chroma < 0.12) return lightness > 0.85 ? "white" : lightness < 0.2 ? "black" : "gray";
  let hue: number;
  if (max === r / 255) hue = (((g - b) / 255 / chroma) % 6) * 60;
  else if (max === g / 255) hue = ((b - r) / 255 / chroma + 2) * 60;
  else hue = ((r - g) / 255 / chroma + 4) * 60;
  if (hue < 0) hue += 360;
  if (hue < 15 || hue >= 340) return "red";
  if (hue < 45) return lightness < 0.35 ? "brown" : "orange";
  if (hue < 70) return "yellow";
  if (hue < 160) return "green";
  if (hue < 195) return "teal";
  if (hue < 255) return "blue";
  if (hue < 290) return "purple";
  return "pink";
}

/**
 * The family a colour name belongs to when two pages' changes are compared: black and gray
 * are one (dark text and thin marks drawn at another size or scale antialias from one to
 * the other); every other name is its own.
 */
export function colourFamily(name: string): string {
  return name === "gray" ? "black" : name;
}

/** How many of the changed pixels took each colour, before and after; and how many changed. */
export interface ColourChange {
  changedPixels: number;
  before: Readonly<Record<string, number>>;
  after: Readonly<Record<string, number>>;
}

/**
 * The colours of the pixels that changed between two RGB pictures of the same size (3
 * bytes a pixel), counted by plain name before and after: a check mark turning green, a
 * field's outline turning red, a panel turning white, each shows as the count of that
 * colour growing among the changed pixels.
 */
export function colourChange(before: Buffer, after: Buffer): ColourChange {
  const counts = { before: {} as Record<string, number>, after: {} as Record<string, number> };
  let changedPixels = 0;
  if (before.length !== after.length) return { changedPixels, ...counts };
  for (let offset = 0; offset + 2 < after.length; offset += 3) {
    const [r0, g0, b0, r1, g1, b1] = [before[offset]!, before[offset + 1]!, before[offset + 2]!, after[offset]!, after[offset + 1]!, after[offset + 2]!];
    if (Math.abs(r0 - r1) <= PIXEL_TOLERANCE && Math.abs(g0 - g1) <= PIXEL_TOLERANCE && Math.abs(b0 - b1) <= PIXEL_TOLERANCE) continue;
    changedPixels += 1;
    const was = colourName(r0, g0, b0);
    const now = colourName(r1, g1, b1);
    counts.before[was] = (counts.before[was] ?? 0) + 1;
    counts.after[now] = (counts.after[now] ?? 0) + 1;
  }
  return { changedPixels, ...counts };
}

/**
 * The colours a change brought: those whose share of the changed pixels grew by at least
 * `minShare` (a colour that only moved, or antialiasing around moved text, grows little).
 */
export function coloursGained(change: ColourChange, minShare: number): string[] {
  if (change.changedPixels === 0) return [];
  return Object.keys(change.after)
    .filter((name) => ((change.after[name] ?? 0) - (change.before[name] ?? 0)) / change.changedPixels >= minShare)
    .sort((a, b) => (change.after[b] ?? 0) - (change.before[b] ?? 0) - ((change.after[a] ?? 0) - (change.before[a] ?? 0)));
}
