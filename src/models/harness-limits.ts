/**
 * The harness's per-model limits (its config.py API_CONFIG, as docs/protocol.md §2 states
 * it), for the official profile: the first entry whose key is a substring of the
 * lower-cased model name wins, else the default. Under official these replace a preset's
 * own maxTokens, maxImages, maxFrames, timeoutMs and maxImageSide, so a model generates
 * with the numbers the leaderboard's runs had.
 *
 * Sources: output tokens, the qwen limits and the 1000 px resize are docs/protocol.md §2;
 * the 600 s timeouts (dated snapshots, gpt-5, glm, doubao), glm's 20 images and frames,
 * the full doubao and gpt-4.1 keys come from a public copy of config.py (the protocol
 * gives "300–600 s" and "20 for some open models" without saying which). That copy gives
 * glm and doubao 16384 output tokens where the protocol says 4096: we follow the
 * protocol, and the README's deviations table says so.
 */
import { apiModelId, type ModelSpec } from "./spec.ts";

export interface HarnessLimits {
  key: string;
  maxTokens: number;
  maxImages: number;
  maxFrames: number;
  timeoutMs: number;
  maxImageSide?: number;
}

const SECOND = 1000;

/** In the harness's lookup order. */
export const HARNESS_LIMITS: readonly HarnessLimits[] = Object.freeze([
  { key: "claude", maxTokens: 16_384, maxImages: 70, maxFrames: 64, timeoutMs: 300 * SECOND, maxImageSide: 1000 },
  { key: "glm", maxTokens: 4096, maxImages: 20, maxFrames: 20, timeoutMs: 600 * SECOND },
  { key: "qwen", maxTokens: 4096, maxImages: 20, maxFrames: 20, timeoutMs: 300 * SECOND },
  { key: "gpt-4o-2024-05-13", maxTokens: 4096, maxImages: 70, maxFrames: 64, timeoutMs: 600 * SECOND },
  { key: "gpt-5", maxTokens: 16_384, maxImages: 70, maxFrames: 64, timeoutMs: 600 * SECOND },
  { key: "doubao-seed-1-6-thinking-250615", maxTokens: 4096, maxImages: 70, maxFrames: 64, timeoutMs: 600 * SECOND },
  { key: "gpt-4.1-2025-04-14", maxTokens: 16_384, maxImages: 70, maxFrames: 64, timeoutMs: 600 * SECOND },
]);

export const HARNESS_DEFAULT_LIMITS: HarnessLimits = Object.freeze({
  key: "default",
  maxTokens: 16_384,
  maxImages: 70,
  maxFrames: 64,
  timeoutMs: 300 * SECOND,
});

/** The harness's entry for a model name (it looks up the name it sends to the API). */
export function harnessLimitsFor(modelName: string): HarnessLimits {
  const lower = modelName.toLowerCase();
  return HARNESS_LIMITS.find((entry) => lower.includes(entry.key)) ?? HARNESS_DEFAULT_LIMITS;
}

/** The spec with the harness's limits for its API model id (the official profile's generation). */
export function withHarnessLimits(spec: ModelSpec): ModelSpec {
  const { key: _key, maxImageSide, ...limits } = harnessLimitsFor(apiModelId(spec));
  const { maxImageSide: _own, ...rest } = spec;
  return { ...rest, ...limits, ...(maxImageSide ? { maxImageSide } : {}) };
}
