/**
 * The "DINO" column's metric for a run: DINOv2 when its model folder is present,
 * otherwise the named fallback (ssim-gray-256). Which one ran, and why DINO did not,
 * is part of the result so no table mixes the two unknowingly.
 */
import { EVALUATOR_SETTINGS } from "../settings.ts";
import { dinoSimilarity, loadDinoModel, locateDinoModel, type DinoLocation } from "./dino.ts";
import { ssimSimilarity } from "./ssim.ts";

export interface VisualMetricInfo {
  /** "dinov2-base-cls-cosine" or "ssim-gray-256". */
  name: string;
  /** `available` with the model folder, or `unavailable` with the reason (then `name` is the fallback). */
  dino: { status: "available"; modelId: string; modelDir: string } | { status: "unavailable"; reason: string };
}

export interface VisualMetric {
  readonly info: VisualMetricInfo;
  /** Similarity in [0, 1] of a reference checkpoint and a candidate screenshot. */
  similarity(reference: Buffer, candidate: Buffer): Promise<number>;
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
      info: { name: EVALUATOR_SETTINGS.dino.metricName, dino: { status: "available", modelId: EVALUATOR_SETTINGS.dino.modelId, modelDir: location.modelDir } },
      similarity: (reference, candidate) => dinoSimilarity(model, reference, candidate),
    };
  }
  return {
    info: { name: EVALUATOR_SETTINGS.visualFallback.metricName, dino: { status: "unavailable", reason: location.reason } },
    similarity: ssimSimilarity,
  };
}
