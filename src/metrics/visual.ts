/**
 * The "DINO" column's metric for a run: DINOv2 when its model folder is present,
 * otherwise the named fallback (ssim-gray-256). Which one ran, and why DINO did not,
 * is part of the result so no table mixes the two unknowingly.
 */
import { IwrError } from "../errors.ts";
import { clippedCosine, dinoSimilarity, loadDinoModel, locateDinoModel } from "./dino.ts";
import type { DinoLocation } from "./dino-location.ts";
import { METRIC_SETTINGS } from "./settings.ts";
import { greyPixels, meanSsim, ssimSimilarity } from "./ssim.ts";

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
  /** Similarity in [0, 1] of a reference checkpoint and a candidate screenshot. */
  similarity(reference: Buffer, candidate: Buffer): Promise<number>;
  /**
   * The same similarity in two steps, for callers that compare many images with many
   * (the self-check aligns every screenshot with every video state): each image's
   * features once, then `compare` for each pair; equal to `similarity` on the same two.
   */
  features(image: Buffer): Promise<VisualFeatures>;
  compare(a: VisualFeatures, b: VisualFeatures): number;
}

/**
 * Chooses and prepares the visual metric. With the model present it is loaded now
 * (once per process), so a broken model fails here, before any task is scored.
 */
export async function createVisualMetric(options: { location?: DinoLocation } = {}): Promise<VisualMetric> {
  const location = options.location ?? locateDinoModel();
  if (location.found) {
    const model = await loadDinoModel(location.modelDir);
    return {
      info: { name: METRIC_SETTINGS.dino.metricName, dino: { status: "available", modelId: METRIC_SETTINGS.dino.modelId, modelDir: location.modelDir } },
      similarity: (reference, candidate) => dinoSimilarity(model, reference, candidate),
      features: (image) => model.embed(image),
      compare: (a, b) => {
        if (!(a instanceof Float32Array) || !(b instanceof Float32Array))
          throw new IwrError("EVALUATOR", "DINO compares embeddings made by its own features()");
        return clippedCosine(a, b);
      },
    };
  }
  const side = METRIC_SETTINGS.visualFallback.side;
  return {
    info: { name: METRIC_SETTINGS.visualFallback.metricName, dino: { status: "unavailable", reason: location.reason } },
    similarity: ssimSimilarity,
    features: (image) => greyPixels(image, side),
    compare: (a, b) => {
      if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array)) throw new IwrError("EVALUATOR", "SSIM compares grey pixels made by its own features()");
      return meanSsim(a, b, side);
    },
  };
}
