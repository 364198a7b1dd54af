/**
 * Comparing a self-replay with the video: each screenshot (the initial one and one after
 * each executed action) is aligned to one of the video's stable states, monotonically
 * (a later screenshot never matches an earlier state), so that the total similarity is
 * the largest possible. Similarity of a pair is the mean of the OCR text similarity, as
 * the evaluator computes it, and the image similarity in use (DINO, or its labelled
 * fallback). The alignment adds a third, finer term: how few pixels differ (grey,
 * 640 × 360, by more than 24 levels), as 1 / (1 + differing / 200). The image metric
 * and OCR see a calculator showing "1" and one showing "12" as nearly the same picture
 * (a digit is a few hundred pixels of a screen), and the alignment must not. Then, per
 * step: did the page change exactly when the aligned video did?
 */
import sharp from "sharp";
import { readImageText } from "../evaluator/metrics/ocr.ts";
import { textSimilarity } from "../evaluator/metrics/text-similarity.ts";
import type { VisualFeatures, VisualMetric } from "../evaluator/metrics/visual.ts";

export interface ImageReading {
  text: string;
  features: VisualFeatures;
  /** Grey pixels at 640 × 360, for the alignment's finer term. */
  pixels: Buffer;
}

const PIXEL_SIDE = { width: 640, height: 360 };
const PIXEL_TOLERANCE = 24;
/** Differing pixels (at PIXEL_SIDE) at which the pixel term halves: about one changed digit or word. */
const PIXEL_HALF = 200;

/** An image's OCR text and visual features; video frames are read once and kept on disk (reference texts). */
export async function readImage(png: Buffer, metric: VisualMetric, options: { stable?: boolean } = {}): Promise<ImageReading> {
  const [text, features, pixels] = await Promise.all([
    readImageText(png, { reference: options.stable ?? false }),
    metric.features(png),
    sharp(png).resize(PIXEL_SIDE.width, PIXEL_SIDE.height, { fit: "fill" }).greyscale().raw().toBuffer(),
  ]);
  return { text, features, pixels };
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

function pixelTerm(a: Buffer, b: Buffer): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let differing = 0;
  for (let i = 0; i < a.length; i++) if (Math.abs((a[i] ?? 0) - (b[i] ?? 0)) > PIXEL_TOLERANCE) differing += 1;
  return 1 / (1 + differing / PIXEL_HALF);
}

export function pairSimilarity(a: ImageReading, b: ImageReading, metric: VisualMetric): PairSimilarity {
  const text = textSimilarity(a.text, b.text);
  const image = metric.compare(a.features, b.features);
  const pixel = pixelTerm(a.pixels, b.pixels);
  return { text, image, pixel, combined: (text + image) / 2, alignment: (text + image + 2 * pixel) / 4 };
}

export interface Alignment {
  /** For each screenshot, the index of its video state. */
  states: number[];
  similarities: PairSimilarity[];
  total: number;
}

/**
 * The monotone assignment of screenshots to states with the largest total similarity:
 * best[i][j] = the best total for screenshots 0..i with screenshot i on state j; each
 * screenshot may stay on the state of the one before (an action that changed nothing).
 */
export function alignMonotone(matrix: readonly (readonly PairSimilarity[])[]): Alignment {
  const rows = matrix.length;
  const columns = matrix[0]?.length ?? 0;
  if (rows === 0 || columns === 0) return { states: [], similarities: [], total: 0 };
  const best: number[][] = [];
  const from: number[][] = [];
  for (let i = 0; i < rows; i++) {
    best.push(new Array<number>(columns).fill(-Infinity));
    from.push(new Array<number>(columns).fill(-1));
    let runningBest = -Infinity;
    let runningAt = -1;
    for (let j = 0; j < columns; j++) {
      const here = matrix[i]?.[j]?.alignment ?? 0;
      if (i === 0) {
        best[i]![j] = here;
        continue;
      }
      const previous = best[i - 1]![j]!;
      if (previous > runningBest) {
        runningBest = previous;
        runningAt = j;
      }
      best[i]![j] = runningBest + here;
      from[i]![j] = runningAt;
    }
  }
  const last = best[rows - 1]!;
  let state = last.indexOf(Math.max(...last));
  const total = last[state] ?? 0;
  const states = new Array<number>(rows);
  for (let i = rows - 1; i >= 0; i--) {
    states[i] = state;
    state = from[i]?.[state] ?? -1;
  }
  return { states, similarities: states.map((j, i) => matrix[i]![j]!), total };
}
