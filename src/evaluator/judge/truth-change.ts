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
import { pictureSharp } from "../../metrics/decoded-pictures.ts";
import { forgetWithReadings } from "../../metrics/image-readings.ts";
import { readingFor } from "../../metrics/ocr-cost.ts";
import { oncePerBuffer } from "../../metrics/once-per-buffer.ts";
import { changedRegions, MIN_CHANGED_PIXELS, pixelDiff, type Region } from "../../metrics/pixel-diff.ts";
import type { AssertionLiteral } from "../../replay/grounding/description-text.ts";
import { allReadings, literalSimilarity, OCR_READING_SETTINGS, occurrences, resemblances, type ScreenReadings } from "./ocr-reading.ts";
import { StageTallies, type StageTally } from "./stage-tallies.ts";

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
  /** How much each reading of a true screen enlarges: the change read near a literal, each changed region, the whole screen. */
  scales: Object.freeze({ near: 2, region: 3, wholeScreen: 2 }),
  /** The margin around a changed region read for a literal the whole screen did not show. */
  regionMargin: 16,
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
const colourPixels = oncePerBuffer(async (png) => {
  const { width, height } = CHANGE_READING_SETTINGS.colourSide;
  return (await pictureSharp(png)).removeAlpha().resize(width, height, { fit: "fill" }).raw().toBuffer();
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
    const text = await screens.region(which, widened(region, CHANGE_READING_SETTINGS.nearCrop, size), CHANGE_READING_SETTINGS.scales.near);
    if (literalSimilarity(literal, text) >= OCR_READING_SETTINGS.literalSimilarity) return true;
  }
  return false;
}

/**
 * What one stage of reading the true page's screens did over a run: how many times a
 * literal was looked for on a screen at that stage (a stage is reached only when the ones
 * before it did not find the literal) and how many times it found it. Calibration prints
 * these beside the candidate's stages, so that each reading is kept for what it finds.
 */
export type TruthReadingTally = StageTally<"reached" | "found">;

const { scales, regionMargin } = CHANGE_READING_SETTINGS;
const WHOLE_STAGE = "whole screen";
const REGIONS_STAGE = `changed regions, ${regionMargin} px margin, ×${scales.region}`;
const ENLARGED_STAGE = `whole screen ×${scales.wholeScreen}`;
const NEAR_STAGE = `near the change, ×${scales.near} (literals read on either screen)`;
/** A stage as the purpose of its OCR readings (ocr-cost.ts). */
const truthPurpose = (stage: string) => `judge, true page's screens: ${stage}`;

const truthTallies = new StageTallies([WHOLE_STAGE, REGIONS_STAGE, ENLARGED_STAGE, NEAR_STAGE], ["reached", "found"]);
/** Literals whose fate would differ had the enlarged whole screen not been read (the stage's worth in fate terms). */
let fatesTheEnlargedReadingDecided = 0;

/** Notes one look at a stage and whether it found the literal; returns what it found. */
type Tally = (stage: string, found: boolean) => boolean;

/**
 * A tally for one reading of a true change: its looks are kept aside and added to the
 * run's tallies only once the whole reading has succeeded (`commit`), so a reading that
 * fails part-way (and is made again at the next judgement) is not counted twice.
 */
function changeTally(): { tally: Tally; commit: () => void } {
  const looks: Array<[string, boolean]> = [];
  return {
    tally: (stage, found) => {
      looks.push([stage, found]);
      return found;
    },
    commit: () => {
      for (const [stage, found] of looks) {
        truthTallies.add(stage, "reached");
        if (found) truthTallies.add(stage, "found");
      }
    },
  };
}

/** The true page's reading tallies so far, stage by stage in the order they run. */
export function truthReadingTallies(): { stages: TruthReadingTally[]; fatesTheEnlargedReadingDecided: number } {
  return { stages: truthTallies.snapshot(), fatesTheEnlargedReadingDecided };
}

/** A literal's reading on one true screen: how often it reads, and whether the enlarged whole screen was what found it. */
export interface LiteralReading {
  count: number;
  byEnlarged: boolean;
}

/** How often a literal reads on one true screen: whole, then (when not read) in the changed regions and enlarged. */
async function readingsOf(
  tallied: Tally,
  literal: string,
  screens: ScreenReadings,
  which: "before" | "after",
  regions: readonly Region[],
  size: { width: number; height: number },
): Promise<LiteralReading> {
  const threshold = OCR_READING_SETTINGS.literalSimilarity;
  const whole = await readingFor(truthPurpose(WHOLE_STAGE), () => (which === "before" ? screens.beforeText() : screens.afterText()));
  if (tallied(WHOLE_STAGE, literalSimilarity(literal, whole) >= threshold)) return { count: occurrences(literal, whole), byEnlarged: false };
  if (regions.length > 0) {
    let inRegion = false;
    for (const region of regions) {
      const text = await readingFor(truthPurpose(REGIONS_STAGE), () =>
        screens.region(which, widened(region, { x: regionMargin, y: regionMargin }, size), scales.region),
      );
      inRegion = literalSimilarity(literal, text) >= threshold;
      if (inRegion) break;
    }
    if (tallied(REGIONS_STAGE, inRegion)) return { count: 1, byEnlarged: false };
  }
  const enlarged = await readingFor(truthPurpose(ENLARGED_STAGE), () => screens.region(which, { left: 0, top: 0, ...size }, scales.wholeScreen, "block"));
  const found = tallied(ENLARGED_STAGE, literalSimilarity(literal, enlarged) >= threshold);
  return { count: found ? occurrences(literal, enlarged) : 0, byEnlarged: found };
}

/**
 * A literal's fate from its counts on the two screens, whether it reads next to the change
 * on each, and how many places on the old screen resemble it: it appeared only when the new
 * screen reads it more often than the old one shows anything like it, since OCR that garbles
 * one of two copies on the old screen would otherwise make the other look new.
 */
function fateOf(before: number, after: number, nearBefore: boolean, nearAfter: boolean, alikeBefore: number): LiteralFate {
  if (after > Math.max(before, alikeBefore) && nearAfter) return "appeared";
  if (before > 0 && after === 0 && nearBefore) return "went";
  return before > 0 || after > 0 ? "kept" : "unread";
}

/**
 * A literal's fate from its readings on the two true screens (a count raised to 1 where it
 * reads next to the change), and whether the fate would differ had the enlarged whole
 * screen not been read: its counts dropped, and, with nothing read elsewhere, no near
 * reading either (those run only for a literal read somewhere), so "unread".
 */
export function literalFate(readings: {
  before: LiteralReading;
  after: LiteralReading;
  nearBefore: boolean;
  nearAfter: boolean;
  /** How many places on the old screen's whole text resemble it, garbled copies included (resemblances). */
  alikeBefore: number;
}): { fate: LiteralFate; onlyByEnlarged: boolean } {
  const { before, after, nearBefore, nearAfter, alikeBefore } = readings;
  const counted = (count: number, near: boolean) => (near ? Math.max(count, 1) : count);
  const fate = fateOf(counted(before.count, nearBefore), counted(after.count, nearAfter), nearBefore, nearAfter, alikeBefore);
  const withoutEnlarged = (reading: LiteralReading) => (reading.byEnlarged ? 0 : reading.count);
  const [beforeElsewhere, afterElsewhere] = [withoutEnlarged(before), withoutEnlarged(after)];
  const fateWithoutEnlarged =
    beforeElsewhere > 0 || afterElsewhere > 0
      ? fateOf(counted(beforeElsewhere, nearBefore), counted(afterElsewhere, nearAfter), nearBefore, nearAfter, alikeBefore)
      : "unread";
  return { fate, onlyByEnlarged: fateWithoutEnlarged !== fate };
}

/**
 * Whether reading near the change on the old screen can still alter what is known of a
 * literal (its fate, whether it stands near the change, whether the enlarged reading alone
 * decided its fate). Not once the new screen reads it near the change and the old screen
 * already read it without the enlarged pass: it is near the change either way, its old
 * count is at least one either way, and with the new one at least one too it cannot have
 * gone. A screen's near reading is a crop around each of up to ten changes, enlarged (a
 * tall one read in bands), so it is skipped then. On `npm start`'s 60 cells from empty
 * caches OCR read 1,681 pictures instead of 1,722, with the same verdicts.
 */
export function oldScreenNearMatters(before: LiteralReading, nearAfter: boolean): boolean {
  return !(nearAfter && before.count > 0 && !before.byEnlarged);
}

/** Truth changes already read in this process, by the two states' bytes and the literals (most recent last). */
const truthChanges = new Map<string, Promise<TruthChange>>();
/** Enough for every action of a large suite in one run; each entry is a few hundred bytes. */
const TRUTH_CHANGES_KEPT = 4096;
// Made of OCR readings: forgetting them (bench:evaluator's cold and warm runs) forgets these too.
forgetWithReadings(() => truthChanges.clear());

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
  // Literals and screens are read side by side: each reading is one OCR call, and every
  // candidate of the task waits for this change, so a chain of them one after another would
  // leave the OCR workers idle. Each literal still reads its stages in order (a later stage
  // only when an earlier one did not find it), and a crop two literals need is read once.
  // The one chain: next to the change, the new screen before the old one, which is then
  // often not needed (oldScreenNearMatters); that saves CPU at the price of some wall time.
  const { tally, commit } = changeTally();
  let decidedByEnlarged = 0;
  const onTruth = await allReadings(
    literals.map(async (literal): Promise<LiteralOnTruth> => {
      const [before, after] = await allReadings([
        readingsOf(tally, literal.text, screens, "before", change.regions, size),
        readingsOf(tally, literal.text, screens, "after", change.regions, size),
      ]);
      // Read again where the screen changed, on both screens: a literal beside a changed field can be missed whole-screen.
      // The new screen first: where it finds the literal, the old screen's reading may no longer be able to change anything.
      const readAgain = change.regions.length > 0 && (before.count > 0 || after.count > 0);
      const readNearOn = async (which: "before" | "after") =>
        tally(NEAR_STAGE, await readingFor(truthPurpose(NEAR_STAGE), () => readNear(literal.text, screens, which, change.regions, size)));
      const nearAfter = readAgain && (await readNearOn("after"));
      const nearBefore = readAgain && oldScreenNearMatters(before, nearAfter) && (await readNearOn("before"));
      const alikeBefore = resemblances(literal.text, await screens.beforeText());
      const { fate, onlyByEnlarged } = literalFate({ before, after, nearBefore, nearAfter, alikeBefore });
      if (onlyByEnlarged) decidedByEnlarged += 1;
      return { literal, fate, nearChange: nearBefore || nearAfter };
    }),
  );
  commit();
  fatesTheEnlargedReadingDecided += decidedByEnlarged;
  return { ...change, literals: onTruth };
}
