/**
 * The "DINO" column's metric for a run: DINOv2 when its model folder is present,
 * otherwise the named fallback (ssim-gray-256). Which one ran, and why DINO did not,
 * is part of the result so no table mixes the two unknowingly.
 *
 * Each image's features (a DINO embedding, or grey pixels for SSIM) are computed once
 * per image content and kept on disk between runs (image-readings.ts): a checkpoint
 * compared with every candidate, or a screenshot equal to another, is not embedded again.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import sharp from "sharp";
import { IwrError } from "../errors.ts";
import { clippedCosine, loadDinoModel, locateDinoModel } from "./dino.ts";
import type { DinoLocation } from "./dino-location.ts";
import { type ImageReader, readOnce } from "./image-readings.ts";
import { METRIC_SETTINGS } from "./settings.ts";
import { greyPixels, meanSsim } from "./ssim.ts";

export interface VisualMetricInfo {
  /** "dinov2-base-cls-cosine" or "ssim-gray-256". */
  name: string;
  /** `available` with the model folder, or `unavailable` with the reason (then `name` is the fallback). */
  dino: { status: "available"; modelId: string; modelDir: string } | { status: "unavailable"; reason: string };
}

/** What the metric extracts from one image (a DINO embedding, or grey pixels for SSIM). */
export type VisualFeatures = Float32Array | Uint8Array;

export interface VisualMetric {
  readonly info: VisualMetricInfo;
  /** Similarity in [0, 1] of a reference checkpoint and a candidate screenshot: compare(features(reference), features(candidate)). */
  similarity(reference: Buffer, candidate: Buffer): Promise<number>;
  /**
   * The same similarity in two steps, for callers that compare many images with many
   * (the self-check aligns every screenshot with every video state): each image's
   * features once, then `compare` for each pair; equal to `similarity` on the same two.
   */
  features(image: Buffer): Promise<VisualFeatures>;
  compare(a: VisualFeatures, b: VisualFeatures): number;
}

/** How image libraries that decide the features are named in a reader's identity. */
export function imageLibraryVersions(): string {
  return `sharp@${sharp.versions.sharp ?? "unknown"} vips@${sharp.versions.vips}`;
}

function metricWithFeatures<T extends VisualFeatures>(
  info: VisualMetricInfo,
  reader: ImageReader<T>,
  compare: (a: VisualFeatures, b: VisualFeatures) => number,
): VisualMetric {
  const features = (image: Buffer) => readOnce(reader, image);
  return {
    info,
    features,
    compare,
    similarity: async (reference, candidate) => {
      const [a, b] = await Promise.all([features(reference), features(candidate)]);
      return compare(a, b);
    },
  };
}

/**
 * Chooses and prepares the visual metric. With the model present it is loaded now
 * (once per process), so a broken model fails here, before any task is scored.
 */
export async function createVisualMetric(options: { location?: DinoLocation } = {}): Promise<VisualMetric> {
  const location = options.location ?? locateDinoModel();
  if (location.found) {
    const model = await loadDinoModel(location.modelDir);
    const embeddings: ImageReader<Float32Array> = {
      kind: "visual-features",
      identity: `${METRIC_SETTINGS.dino.metricName} ${model.identity} ${imageLibraryVersions()}`,
      read: (image) => model.embed(image),
      encode: (embedding) => Buffer.from(embedding.buffer, embedding.byteOffset, embedding.byteLength),
      decode: (stored) => (stored.length % 4 === 0 ? new Float32Array(Uint8Array.from(stored).buffer) : undefined),
      size: (embedding) => embedding.byteLength,
    };
    const info: VisualMetricInfo = {
      name: METRIC_SETTINGS.dino.metricName,
      dino: { status: "available", modelId: METRIC_SETTINGS.dino.modelId, modelDir: location.modelDir },
    };
    return metricWithFeatures(info, embeddings, (a, b) => {
      if (!(a instanceof Float32Array) || !(b instanceof Float32Array)) throw new IwrError("EVALUATOR", "DINO compares embeddings made by its own features()");
      return clippedCosine(a, b);
    });
  }
  const settings = METRIC_SETTINGS.visualFallback;
  const side = settings.side;
  const grey: ImageReader<Uint8Array> = {
    kind: "visual-features",
    identity: `${settings.metricName} side ${side} ${imageLibraryVersions()}`,
    read: (image) => greyPixels(image, side),
    encode: (pixels) => deflateRawSync(pixels, { level: 1 }),
    decode: (stored) => {
      const pixels = new Uint8Array(inflateRawSync(stored));
      return pixels.length === side * side ? pixels : undefined;
    },
    size: (pixels) => pixels.byteLength,
  };
  const info: VisualMetricInfo = { name: settings.metricName, dino: { status: "unavailable", reason: location.reason } };
  return metricWithFeatures(info, grey, (a, b) => {
    if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array)) throw new IwrError("EVALUATOR", "SSIM compares grey pixels made by its own features()");
    return meanSsim(a, b, side);
  });
}
