/**
 * Comparing a self-replay with the video: each screenshot (the initial one and one after
 * each executed action) is aligned to one of the video's stable states, monotonically
 * (a later screenshot never matches an earlier state), so that the total similarity is
 * the largest possible. Similarity of a pair is the mean of the OCR text similarity, as
 * the evaluator computes it, and the image similarity in use (DINO, or its labelled
 * fallback), less what a recording's shape makes unlikely (ALIGNMENT_PRIORS). The
 * alignment adds a third, finer term: how few pixels differ (grey,
 * 640 × 360, by more than 24 levels, beyond a one-pixel shift: change-evidence.ts), as
 * 1 / (1 + differing / 200). The image metric
 * and OCR see a calculator showing "1" and one showing "12" as nearly the same picture
 * (a digit is a few hundred pixels of a screen), and the alignment must not. Then, per
 * step: did the page change when the aligned video did, and the same way
 * (step-evidence.ts)?
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { forEachDifferingPixel, type GreyPicture, greyPicture } from "../metrics/change-evidence.ts";
import { pictureSharp } from "../metrics/decoded-pictures.ts";
import { type ImageReader, readOnce } from "../metrics/image-readings.ts";
import { readImageText } from "../metrics/ocr.ts";
import { readingFor } from "../metrics/ocr-cost.ts";
import { textSimilarity } from "../metrics/text-similarity.ts";
import { imageLibraryVersions, type VisualFeatures, type VisualMetric } from "../metrics/visual.ts";

/** A picture's readings; its grey picture is 640 × 360, for the alignment's finer term and the changed cells. */
export interface ImageReading extends GreyPicture {
  text: string;
  features: VisualFeatures;
}

const PIXEL_SIDE = { width: 640, height: 360 };
/** What its OCR readings are for (ocr-cost.ts): the video's states and the self-replay's screenshots. */
const SELF_CHECK_PURPOSE = "self-check: the video's states and its replay's screenshots";
/** Differing pixels (at PIXEL_SIDE) at which the pixel term halves: about one changed digit or word. */
const PIXEL_HALF = 200;

const PIXEL_COUNT = PIXEL_SIDE.width * PIXEL_SIDE.height;

/** The alignment's grey pixels of an image, read once per image content like its text and features. */
const GREY_PIXELS: ImageReader<Buffer> = {
  kind: "selfcheck-pixels",
  identity: `grey ${PIXEL_SIDE.width}x${PIXEL_SIDE.height} fill ${imageLibraryVersions()}`,
  read: async (png) => (await pictureSharp(png)).resize(PIXEL_SIDE.width, PIXEL_SIDE.height, { fit: "fill" }).greyscale().raw().toBuffer(),
  encode: (pixels) => deflateRawSync(pixels, { level: 1 }),
  decode: (stored) => {
    const pixels = inflateRawSync(stored);
    return pixels.length === PIXEL_COUNT ? pixels : undefined;
  },
  size: (pixels) => pixels.length,
};

/** An image's OCR text, visual features and grey pixels, each read once per image content (and kept on disk between runs). */
export async function readImage(png: Buffer, metric: VisualMetric): Promise<ImageReading> {
  const [text, features, pixels] = await Promise.all([
    readingFor(SELF_CHECK_PURPOSE, () => readImageText(png)),
    metric.features(png),
    readOnce(GREY_PIXELS, png),
  ]);
  return { text, features, ...greyPicture(pixels, PIXEL_SIDE.width) };
}

export interface PairSimilarity {
  text: number;
  image: number;
  /** 1 / (1 + differing pixels / 200) (see the module comment). */
  pixel: number;
  /** (text + image) / 2: what the self-score's appearance averages. */
  combined: number;
  /** (text + image + 2 · pixel) / 4: what the alignment maximises. */
  alignment: number;
}

function pixelTerm(a: GreyPicture, b: GreyPicture): number {
  if (a.pixels.length !== b.pixels.length || a.pixels.length === 0) return 0;
  let differing = 0;
  forEachDifferingPixel(a, b, PIXEL_SIDE.width, () => {
    differing += 1;
  });
  return 1 / (1 + differing / PIXEL_HALF);
}

/** Nearly every pixel within a few grey levels of the middle one: nothing drawn yet. */
export function isBlankPicture(reading: ImageReading): boolean {
  const { pixels } = reading;
  if (pixels.length === 0) return true;
  const sorted = Uint8Array.from(pixels).sort();
  const middle = sorted[sorted.length >> 1]!;
  let near = 0;
  for (const value of pixels) if (Math.abs(value - middle) <= 10) near += 1;
  return near >= 0.995 * pixels.length;
}

export function pairSimilarity(a: ImageReading, b: ImageReading, metric: VisualMetric): PairSimilarity {
  const text = textSimilarity(a.text, b.text);
  const image = metric.compare(a.features, b.features);
  const pixel = pixelTerm(a, b);
  return { text, image, pixel, combined: (text + image) / 2, alignment: (text + image + 2 * pixel) / 4 };
}

export interface Alignment {
  /** For each screenshot, the index of its video state. */
  states: number[];
  similarities: PairSimilarity[];
  /** Total similarity less the priors' costs (what the alignment maximised). */
  total: number;
}

/**
 * What the alignment knows about recordings besides similarity, in similarity units:
 *  - a recorded action nearly always shows something: a step that keeps the video on
 *    its state costs `stillStep`;
 *  - a user pauses between actions: a state the video holds for `heldSec` or longer
 *    inside one step (the step passes over it to a later one) costs `passedHeld`,
 *    unless it is its predecessor scrolled (scroll.ts): the recording scrolling to its
 *    next target holds still while the pointer travels, without a pause. The same goes
 *    for such states before the first screenshot.
 * Without them a page that stopped reacting aligns best by keeping its screenshots on
 * the last state it reached and sending its last step across everything the video did
 * after — and every step would look as if it agreed with the video. The first
 * screenshot pays `passedHeld` for each held state before its own (it is the page once
 * loaded, not a later moment).
 *
 * Besides the pictures, the changes are compared: a step whose change is like the
 * video's change between two states (the same words gained, the same place changed;
 * step-evidence.ts) earns `changeLikeness` × that likeness for moving between them.
 * Pictures alone cannot place a page whose every screenshot is unlike the video (moved,
 * recoloured); its changes still can.
 */
export const ALIGNMENT_PRIORS = Object.freeze({ stillStep: 1, passedHeld: 0.3, heldSec: 1.2, changeLikeness: 0.5 });

export interface AlignmentOptions {
  /** The video's states, for how long each is held. */
  states: ReadonlyArray<{ startSec: number; endSec: number }>;
  /** The last screenshot is the end of the interaction: it sits on the video's last state. */
  anchorEnd: boolean;
  /** Per state, whether it is its predecessor scrolled (scroll.ts): passing over it costs nothing. */
  scrolled?: readonly boolean[];
  /** States before this one are the video's page loading (blank frames): no screenshot sits on them. */
  firstState?: number;
  /** How alike step `step`'s change is to the video's from state `from` to state `to`, in [0, 1]. */
  changeLikeness?: (step: number, from: number, to: number) => number;
}

/**
 * The monotone assignment of screenshots to states with the best total: each
 * screenshot's alignment similarity, plus each step's score (the priors' costs, the
 * change's likeness). The first
 * screenshot may sit on any state (what comes before it is the page loading); with
 * `anchorEnd` the last one sits on the video's last state. best[i][j] = the best total
 * for screenshots 0..i with screenshot i on state j.
 */
export function alignTrajectory(matrix: readonly (readonly PairSimilarity[])[], options: AlignmentOptions): Alignment {
  const rows = matrix.length;
  const columns = matrix[0]?.length ?? 0;
  if (rows === 0 || columns === 0) return { states: [], similarities: [], total: 0 };
  const { stillStep, passedHeld, heldSec, changeLikeness } = ALIGNMENT_PRIORS;
  const held = options.states.map((state, index) => (state.endSec - state.startSec >= heldSec && !options.scrolled?.[index] ? 1 : 0));
  // heldBetween(a, b): held states strictly between a and b, from prefix sums.
  const prefix = [0];
  for (const value of held) prefix.push(prefix[prefix.length - 1]! + value);
  const heldBetween = (from: number, to: number) => (to - from <= 1 ? 0 : prefix[to]! - prefix[from + 1]!);
  const stepScore = (step: number, from: number, to: number) =>
    to === from ? -stillStep : -passedHeld * heldBetween(from, to) + changeLikeness * (options.changeLikeness?.(step, from, to) ?? 0);

  const best = matrix.map(() => new Array<number>(columns).fill(-Infinity));
  const from = matrix.map(() => new Array<number>(columns).fill(-1));
  const firstState = Math.min(options.firstState ?? 0, columns - 1);
  for (let j = firstState; j < columns; j++) best[0]![j] = matrix[0]![j]!.alignment - passedHeld * ((prefix[j] ?? 0) - (prefix[firstState] ?? 0));
  for (let i = 1; i < rows; i++) {
    for (let j = 0; j < columns; j++) {
      let top = -Infinity;
      let at = -1;
      for (let previous = 0; previous <= j; previous++) {
        const total = best[i - 1]![previous]! + stepScore(i - 1, previous, j);
        if (total > top) {
          top = total;
          at = previous;
        }
      }
      best[i]![j] = top + matrix[i]![j]!.alignment;
      from[i]![j] = at;
    }
  }
  const last = best[rows - 1]!;
  let state = options.anchorEnd && rows > 1 ? columns - 1 : last.indexOf(Math.max(...last));
  const total = last[state] ?? 0;
  const states = new Array<number>(rows);
  for (let i = rows - 1; i >= 0; i--) {
    states[i] = state;
    state = from[i]?.[state] ?? -1;
  }
  return { states, similarities: states.map((j, i) => matrix[i]![j]!), total };
}
