/**
 * Whether a screen's change is only a scroll: the new screen is the old one moved up or
 * down, with new rows coming in at one edge. A scroll changes most of a screen's pixels
 * while nothing on the page changed (a browser scrolls a button into view before clicking
 * it), so the offline judge must not take it for the change an action made.
 */
import { pictureSharp } from "./decoded-pictures.ts";
import { PIXEL_TOLERANCE } from "./pixel-diff.ts";

export const SCROLL_SETTINGS = Object.freeze({
  /** Every this many columns are compared while searching (a row of text is many columns wide; rows are all compared, a scroll moves by whole pixels). */
  columnStep: 4,
  /**
   * A shift explains the change when, over what the screens still share, it leaves at most
   * this share of the differences the screens have in place (sparse text on a plain
   * background matches itself at many shifts; only the true one removes nearly all).
   */
  maxLeftOver: 0.1,
  /** The part of the screen both pictures must still share (a scroll by most of a screen is a new screen). */
  minOverlap: 0.25,
});

async function grey(png: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await (await pictureSharp(png)).removeAlpha().greyscale().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Share of the compared pixels (rows of `after` against `before`'s rows `shift` further down) that differ, or 1 once it exceeds `ceiling`. */
function differingShare(before: Buffer, after: Buffer, width: number, height: number, shift: number, ceiling: number): number {
  const step = SCROLL_SETTINGS.columnStep;
  const firstRow = Math.max(0, -shift);
  const lastRow = Math.min(height, height - shift);
  const total = (lastRow - firstRow) * Math.ceil(width / step);
  if (total === 0) return 1;
  const allowed = Math.floor(ceiling * total);
  let misses = 0;
  for (let y = firstRow; y < lastRow; y++) {
    const afterRow = y * width;
    const beforeRow = (y + shift) * width;
    for (let x = 0; x < width; x += step) {
      if (Math.abs(after[afterRow + x]! - before[beforeRow + x]!) > PIXEL_TOLERANCE && ++misses > allowed) return 1;
    }
  }
  return misses / total;
}

/** A screen's change seen as a scroll: by how much, and how many pixels still differ once the scroll is taken out. */
export interface ScrollChange {
  /** Pixels the content moved up (negative: down). */
  shift: number;
  /** Pixels of the shared part that differ after the shift: what changed on the page beyond the scroll. */
  residualPixels: number;
}

/** Pixels of `after`'s rows that differ from `before`'s rows `shift` further down, every column. */
function residualPixels(before: Buffer, after: Buffer, width: number, height: number, shift: number): number {
  let differ = 0;
  for (let y = Math.max(0, -shift); y < Math.min(height, height - shift); y++) {
    for (let x = 0; x < width; x++) if (Math.abs(after[y * width + x]! - before[(y + shift) * width + x]!) > PIXEL_TOLERANCE) differ++;
  }
  return differ;
}

/**
 * The screen's change as a scroll: the vertical shift that leaves the fewest differences
 * over what the two screens still share, when it leaves at most SCROLL_SETTINGS.maxLeftOver
 * of the differences they have in place, and what still differs beyond it. Undefined when
 * the screens do not differ in place or no shift explains the change.
 */
export async function scrollChange(before: Buffer, after: Buffer): Promise<ScrollChange | undefined> {
  const [a, b] = await Promise.all([grey(before), grey(after)]);
  if (a.width !== b.width || a.height !== b.height) return undefined;
  const { width, height } = b;
  const inPlace = differingShare(a.data, b.data, width, height, 0, 1);
  if (inPlace === 0) return undefined;
  let best: { shift: number; share: number } | undefined;
  const maxShift = Math.floor(height * (1 - SCROLL_SETTINGS.minOverlap));
  for (let distance = 1; distance <= maxShift; distance++) {
    for (const shift of [distance, -distance]) {
      const ceiling = Math.min(best?.share ?? Number.POSITIVE_INFINITY, SCROLL_SETTINGS.maxLeftOver * inPlace);
      const share = differingShare(a.data, b.data, width, height, shift, ceiling);
      if (share <= ceiling && (!best || share < best.share)) best = { shift, share };
    }
  }
  return best ? { shift: best.shift, residualPixels: residualPixels(a.data, b.data, width, height, best.shift) } : undefined;
}
