/**
 * Image budgeting and resizing for model requests (docs/protocol.md §2): asset contact
 * sheets go first, video frames fill what the sheets leave of the image cap, and some
 * model families want every image's longer side bounded.
 */
import sharp from "sharp";
import { IwrError } from "../errors.ts";

/** Shrink a PNG so its longer side is at most `maxSide` pixels; smaller images come back unchanged. */
export async function resizeToMaxSide(png: Buffer, maxSide: number): Promise<Buffer> {
  if (!Number.isInteger(maxSide) || maxSide < 1) {
    throw new IwrError("MEDIA", `maxSide must be a positive integer, got ${maxSide}`);
  }
  const { width, height } = await sharp(png).metadata();
  if (width === undefined || height === undefined) throw new IwrError("MEDIA", "cannot read the size of an image to resize");
  if (Math.max(width, height) <= maxSide) return png;
  return sharp(png).resize({ width: maxSide, height: maxSide, fit: "inside", withoutEnlargement: true }).png().toBuffer();
}

export interface ImageLimits {
  /** Images allowed in one request, sheets and frames together. */
  maxImages: number;
  /** Video frames allowed in one request. */
  maxFrames: number;
}

/**
 * How many frames fit beside `sheetCount` sheets. Sheets are never dropped: an asset
 * missing from the request would make the page unbuildable, so a task whose sheets
 * alone exceed the cap is an error for that task rather than a silent truncation.
 */
export function frameBudget(sheetCount: number, limits: ImageLimits, overCap: "fail" | "sheets-only" = "fail"): number {
  // The harness sends every sheet and no frame when the sheets alone fill the cap.
  if (sheetCount > limits.maxImages && overCap === "sheets-only") return 0;
  if (sheetCount > limits.maxImages) {
    throw new IwrError(
      "MEDIA",
      `${sheetCount} asset sheets exceed the model's image cap of ${limits.maxImages} (maxImages); ` +
        `raise maxImages in the model spec or rebuild the task with fewer, larger sheets`,
      { sheets: sheetCount, maxImages: limits.maxImages },
    );
  }
  return Math.max(0, Math.min(limits.maxFrames, limits.maxImages - sheetCount));
}

/** `count` positions evenly spread over `length` items, first item always included. */
export function evenlySpacedIndices(length: number, count: number): number[] {
  if (count >= length) return Array.from({ length }, (_, i) => i);
  if (count <= 0) return [];
  return Array.from({ length: count }, (_, i) => Math.floor((i * length) / count));
}

export interface ImageSelection<Sheet, Frame> {
  sheets: Sheet[];
  frames: Frame[];
  /** Frames offered but left out to respect the caps. */
  framesDropped: number;
}

/**
 * Sheets first, then frames up to what the caps leave. When frames must be cut they are
 * thinned evenly rather than truncated, so the whole interaction stays covered.
 */
export function selectImages<Sheet, Frame>(
  options: { sheets: readonly Sheet[]; frames: readonly Frame[]; overCap?: "fail" | "sheets-only" } & ImageLimits,
): ImageSelection<Sheet, Frame> {
  const budget = frameBudget(options.sheets.length, options, options.overCap);
  const keep = evenlySpacedIndices(options.frames.length, budget);
  const frames = keep.map((index) => options.frames[index]).filter((frame): frame is Frame => frame !== undefined);
  return { sheets: [...options.sheets], frames, framesDropped: options.frames.length - frames.length };
}
