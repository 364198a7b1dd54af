/**
 * What the true page shows around an action, read from the task's recorded states before
 * and after it: how much of the screen changed and where, which colours the change brought,
 * and what happened to each literal the assertion names — it appeared, went, was there all
 * along, or cannot be read on the true page at all. The offline judge takes this as the
 * evidence of what the assertion describes, in place of guessing it from the author's words.
 */
import { createHash } from "node:crypto";
import sharp from "sharp";
import { colourChange, coloursGained } from "../../metrics/change-evidence.ts";
import { oncePerBuffer } from "../../metrics/once-per-buffer.ts";
import { changedRegions, MIN_CHANGED_PIXELS, pixelDiff, type Region } from "../../metrics/pixel-diff.ts";
import type { AssertionLiteral } from "../../replay/grounding/description-text.ts";
import { literalSimilarity, OCR_READING_SETTINGS, occurrences, type ScreenReadings } from "./ocr-reading.ts";

export const CHANGE_READING_SETTINGS = Object.freeze({
  /** Changed regions looked at, largest first. */
  maxRegions: 10,
  /**
   * How far from a change a named thing may stand and still be what changed, by its box in
   * the page's text: a radio's dot or a field sits beside its label on its line (x); a label
   * over its field sits just above it (y), closer than the next row of a form.
   */
  nearReach: Object.freeze({ x: 240, y: 10 }),
  /** Where there are no boxes, OCR reads the change widened by this much (a whole label line must fit in). */
  nearCrop: Object.freeze({ x: 240, y: 24 }),
  /** A colour the change brought: at least this share of the changed pixels took it. */
  colourShare: 0.25,
  /** Pictures are compared for colour at this size (a colour shown over a few pixels is not what a person names). */
  colourSide: Object.freeze({ width: 640, height: 360 }),
});

/** What happened to a literal on the true page over the action. */
export type LiteralFate = "appeared" | "went" | "kept" | "unread";

export interface LiteralOnTruth {
  literal: AssertionLiteral;
  fate: LiteralFate;
  /** Whether it is read where the true page changed (within nearReach of a changed region, on either screen). */
  nearChange: boolean;
}

export interface ScreenChange {
  changedPixels: number;
  changedFraction: number;
  changed: boolean;
  regions: Region[];
  /** Colours the change brought (coloursGained), by how much they grew. */
  colours: string[];
}

export interface TruthChange extends ScreenChange {
  literals: LiteralOnTruth[];
}

/** A screen shrunk for the colour comparison, once per screen (a screen is in two steps, and judged once per assertion). */
const colourPixels = oncePerBuffer((png) => {
  const { width, height } = CHANGE_READING_SETTINGS.colourSide;
  return sharp(png).removeAlpha().resize(width, height, { fit: "fill" }).raw().toBuffer();
});

/** How a screen changed between two pictures: how much, where, and which colours came. */
export async function screenChange(before: Buffer, after: Buffer): Promise<ScreenChange> {
  const settings = CHANGE_READING_SETTINGS;
  const [diff, regions, pixels] = await Promise.all([
    pixelDiff(before, after),
    changedRegions(before, after, { max: settings.maxRegions, padding: 4 }),
    Promise.all([colourPixels(before), colourPixels(after)]),
  ]);
  return {
    changedPixels: diff.changedPixels,
    changedFraction: diff.changedFraction,
    changed: diff.changedPixels >= MIN_CHANGED_PIXELS,
    regions: diff.changedPixels >= MIN_CHANGED_PIXELS ? regions : [],
    colours: coloursGained(colourChange(pixels[0], pixels[1]), settings.colourShare),
  };
}

/** A region widened by `reach` on each side, kept inside the picture. */
export function widened(region: Region, reach: { x: number; y: number }, size: { width: number; height: number }): Region {
  const left = Math.max(0, region.left - reach.x);
  const top = Math.max(0, region.top - reach.y);
  const right = Math.min(size.width, region.left + region.width + reach.x);
  const bottom = Math.min(size.height, region.top + region.height + reach.y);
  return { left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) };
}

/** Whether `literal` is read on one screen within reach of any of `regions` (OCR of each widened region). */
export async function readNear(
  literal: string,
  screens: ScreenReadings,
  which: "before" | "after",
  regions: readonly Region[],
  size: { width: number; height: number },
): Promise<boolean> {
  for (const region of regions) {
    const text = await screens.region(which, widened(region, CHANGE_READING_SETTINGS.nearCrop, size), 2);
    if (literalSimilarity(literal, text) >= OCR_READING_SETTINGS.literalSimilarity) return true;
  }
  return false;
}

/** How often a literal reads on one true screen: whole, then (when not read) in the changed regions and enlarged. */
async function readingsOf(
  literal: string,
  screens: ScreenReadings,
  which: "before" | "after",
  regions: readonly Region[],
  size: { width: number; height: number },
) {
  const threshold = OCR_READING_SETTINGS.literalSimilarity;
  const whole = which === "before" ? await screens.beforeText() : await screens.afterText();
  if (literalSimilarity(literal, whole) >= threshold) return occurrences(literal, whole);
  for (const region of regions) {
    const text = await screens.region(which, widened(region, { x: 16, y: 16 }, size), 3);
    if (literalSimilarity(literal, text) >= threshold) return 1;
  }
  const enlarged = await screens.region(which, { left: 0, top: 0, ...size }, 2, "block");
  return literalSimilarity(literal, enlarged) >= threshold ? occurrences(literal, enlarged) : 0;
}

/** Truth changes already read in this process, by the two states' bytes and the literals (most recent last). */
const truthChanges = new Map<string, Promise<TruthChange>>();
/** Enough for every action of a large suite in one run; each entry is a few hundred bytes. */
const TRUTH_CHANGES_KEPT = 4096;

/**
 * The true page's change over the action, read once per process: every candidate of a task
 * (each arm, each repeat, each draft) is judged against the same two states, and the
 * reading's crops cost CPU to prepare even when their OCR is already known.
 */
export function truthChangeOnce(
  literals: readonly AssertionLiteral[],
  screens: ScreenReadings,
  truth: { before: Buffer; after: Buffer },
): Promise<TruthChange> {
  const key = createHash("sha256").update(truth.before).update("\0").update(truth.after).update(JSON.stringify(literals)).digest("hex");
  let change = truthChanges.get(key);
  if (!change) {
    change = readTruthChange(literals, screens, truth);
    truthChanges.set(key, change);
    // A failed reading is not kept: the next judgement reads again.
    change.catch(() => truthChanges.delete(key));
    if (truthChanges.size > TRUTH_CHANGES_KEPT) truthChanges.delete(truthChanges.keys().next().value!);
  }
  // The judge looks fates up by its own literal objects: hand back this caller's (equal, in the same order).
  return change.then((known) => ({ ...known, literals: known.literals.map((entry, index) => ({ ...entry, literal: literals[index] ?? entry.literal })) }));
}

/**
 * The true page's change over the action, and each literal's fate on it. A literal's text
 * cannot come or go without pixels changing where it stands, so a fate that says it did is
 * only believed when it is read next to a change on that screen; otherwise OCR missed it on
 * one of the two screens, and it was there all along.
 */
async function readTruthChange(literals: readonly AssertionLiteral[], screens: ScreenReadings, truth: { before: Buffer; after: Buffer }): Promise<TruthChange> {
  const change = await screenChange(truth.before, truth.after);
  const { width = 0, height = 0 } = await sharp(truth.after).metadata();
  const size = { width, height };
  const onTruth: LiteralOnTruth[] = [];
  for (const literal of literals) {
    let before = await readingsOf(literal.text, screens, "before", change.regions, size);
    let after = await readingsOf(literal.text, screens, "after", change.regions, size);
    // Read again where the screen changed, on both screens: a literal beside a changed field can be missed whole-screen.
    const nearBefore = change.regions.length > 0 && (before > 0 || after > 0) && (await readNear(literal.text, screens, "before", change.regions, size));
    const nearAfter = change.regions.length > 0 && (before > 0 || after > 0) && (await readNear(literal.text, screens, "after", change.regions, size));
    if (nearBefore) before = Math.max(before, 1);
    if (nearAfter) after = Math.max(after, 1);
    let fate: LiteralFate;
    if (after > before && nearAfter) fate = "appeared";
    else if (before > 0 && after === 0 && nearBefore) fate = "went";
    else fate = before > 0 || after > 0 ? "kept" : "unread";
    onTruth.push({ literal, fate, nearChange: nearBefore || nearAfter });
  }
  return { ...change, literals: onTruth };
}
