/**
 * Whether one picture of a page is another scrolled: the same rows, moved up or down.
 * A recording scrolls to reach a control below the fold before it clicks it, and the
 * video then holds the scrolled page for as long as the pointer takes to travel: a
 * stable state that is the way to the next action, not a pause between two of them
 * (compare.ts's ALIGNMENT_PRIORS charge for passing over a held state). A scroll an
 * action causes (a contents link jumping down an article) looks the same and is
 * flagged too: passing over it is then free as well, and the alignment still places
 * it by the pictures, the still-step cost and the changes' likeness.
 *
 * The offline judge has its own test (src/metrics/scroll-shift.ts): it compares pixels of
 * two screenshots of one page, exact to the pixel. Video frames are compressed, carry a
 * moving pointer, and a plain area matches itself at any shift (that test flagged such
 * frames of two bundled videos as scrolled, nothing left over); hence row profiles here,
 * and the content check.
 *
 * Each grey picture (640 × 360) is reduced to a profile: per row, the mean of each of
 * SCROLL_PROFILE_SETTINGS.blocks column blocks. The later picture is the earlier one scrolled by
 * `dy` rows when, over the rows both show, their profiles differ by at most
 * `maxMeanDifference` grey levels on average, while unshifted they differ clearly
 * (`minUnshiftedDifference`), and the rows both show carry content (a plain background
 * matches itself at any shift, so it proves nothing).
 */

export const SCROLL_PROFILE_SETTINGS = Object.freeze({
  blocks: 16,
  /** The shift must leave at least this share of the rows in view on both pictures. */
  minOverlapShare: 0.25,
  /** Smallest shift counted as a scroll, in rows of the 640 × 360 picture (a one-row settle is not one). */
  minShiftRows: 3,
  /** Mean profile difference (grey levels) at the shift: compression and a pointer stay below it. */
  maxMeanDifference: 2,
  /** Mean profile difference without the shift: the pictures must differ where they stand. */
  minUnshiftedDifference: 6,
  /** Standard deviation of the overlapping profile (grey levels) below which it is a plain background. */
  minContentSpread: 8,
});

function profileOf(pixels: Buffer, width: number): Float32Array {
  const { blocks } = SCROLL_PROFILE_SETTINGS;
  const height = Math.floor(pixels.length / width);
  const blockWidth = width / blocks;
  const profile = new Float32Array(height * blocks);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) profile[y * blocks + Math.floor(x / blockWidth)]! += pixels[y * width + x]!;
  }
  for (let i = 0; i < profile.length; i++) profile[i]! /= blockWidth;
  return profile;
}

/** Mean absolute difference of two profiles over the rows `earlier[y]` ↔ `later[y - dy]` both show. */
function meanDifference(earlier: Float32Array, later: Float32Array, rows: number, dy: number): number {
  const { blocks } = SCROLL_PROFILE_SETTINGS;
  const first = Math.max(0, dy);
  const last = Math.min(rows, rows + dy);
  let sum = 0;
  for (let y = first; y < last; y++) {
    const a = y * blocks;
    const b = (y - dy) * blocks;
    for (let block = 0; block < blocks; block++) sum += Math.abs(earlier[a + block]! - later[b + block]!);
  }
  return sum / ((last - first) * blocks);
}

function spread(profile: Float32Array, from: number, to: number): number {
  const values = profile.subarray(from * SCROLL_PROFILE_SETTINGS.blocks, to * SCROLL_PROFILE_SETTINGS.blocks);
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
}

/**
 * The scroll (rows of the picture, positive when the page moved up: the view went down)
 * that turns `earlier` into `later`, or undefined when `later` is not `earlier` scrolled.
 */
export function scrollBetween(earlier: Buffer, later: Buffer, width = 640): number | undefined {
  if (earlier.length !== later.length || earlier.length === 0) return undefined;
  const rows = Math.floor(earlier.length / width);
  const [before, after] = [profileOf(earlier, width), profileOf(later, width)];
  const { minOverlapShare, minShiftRows, maxMeanDifference, minUnshiftedDifference, minContentSpread } = SCROLL_PROFILE_SETTINGS;
  if (meanDifference(before, after, rows, 0) < minUnshiftedDifference) return undefined;
  const reach = Math.floor(rows * (1 - minOverlapShare));
  let best: { dy: number; difference: number } | undefined;
  for (let dy = -reach; dy <= reach; dy++) {
    if (Math.abs(dy) < minShiftRows) continue;
    const difference = meanDifference(before, after, rows, dy);
    if (!best || difference < best.difference) best = { dy, difference };
  }
  if (!best || best.difference > maxMeanDifference) return undefined;
  const [from, to] = [Math.max(0, best.dy), Math.min(rows, rows + best.dy)];
  return spread(before, from, to) >= minContentSpread ? best.dy : undefined;
}

/** Per picture of a sequence (a video's states), whether it is the picture before it scrolled. */
export function scrolledFromPrevious(pictures: readonly Buffer[], width = 640): boolean[] {
  return pictures.map((picture, index) => index > 0 && scrollBetween(pictures[index - 1]!, picture, width) !== undefined);
}
