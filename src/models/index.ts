/** The model layer: settings, client, response cache, usage. Import from here. */
export {
  ModelSpecSchema,
  PricingSchema,
  DEFAULT_API_KEY_ENV,
  DEFAULT_BASE_URL_ENV,
  NO_API_KEY,
  apiModelId,
  costUsd,
  modelDirName,
  type ModelSpec,
  type ModelSpecInput,
} from "./spec.ts";
export { loadModelSpec, listModelPresets, PRESETS_DIR, type LoadModelSpecOptions } from "./presets.ts";
export { resolveEndpoint, resolveBaseURL, displayURL, isLoopbackURL, type ResolvedEndpoint } from "./endpoint.ts";
export { createModelClient, forRepeat, SAMPLES_PER_REPEAT, type ModelClientOptions } from "./client.ts";
export {
  openResponseCache,
  defaultCacheDir,
  parseCacheMode,
  CACHE_MODES,
  type CacheMode,
  type CacheEntry,
  type ResponseCache,
} from "./cache.ts";
export { cacheStats, clearCache, type CacheStats, type ClearResult } from "./cache-admin.ts";
export { describeRequest, requestHash, canonicalJson, type RequestSummary, type DescribedRequest } from "./request-key.ts";
export { preflightModel, type PreflightOptions } from "./preflight.ts";
export { sumUsage, addCallToTotals, emptyUsageTotals, type UsageTotals } from "./usage.ts";
export { parseRetryAfter } from "./retry.ts";
export { harnessLimitsFor, withHarnessLimits, HARNESS_LIMITS, HARNESS_DEFAULT_LIMITS, type HarnessLimits } from "./harness-limits.ts";
export type { ModelCallResult, ModelClient, InvokeOptions, TokenUsage } from "./types.ts";
