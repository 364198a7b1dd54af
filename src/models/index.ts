/** The model layer: settings, client, response cache, usage. Import from here. */

export {
  CACHE_MODES,
  type CacheEntry,
  type CacheMode,
  defaultCacheDir,
  openResponseCache,
  parseCacheMode,
  type ResponseCache,
} from "./cache.ts";
export { type CacheStats, type ClearResult, cacheStats, clearCache } from "./cache-admin.ts";
export { createModelClient, forRepeat, type ModelClientOptions, SAMPLES_PER_REPEAT } from "./client.ts";
export { displayURL, isLoopbackURL, type ResolvedEndpoint, resolveBaseURL, resolveEndpoint } from "./endpoint.ts";
export { HARNESS_DEFAULT_LIMITS, HARNESS_LIMITS, type HarnessLimits, harnessLimitsFor, withHarnessLimits } from "./harness-limits.ts";
export { type PreflightOptions, preflightModel } from "./preflight.ts";
export { type LoadModelSpecOptions, listModelPresets, loadModelSpec, PRESETS_DIR } from "./presets.ts";
export { canonicalJson, type DescribedRequest, describeRequest, type RequestSummary, requestHash } from "./request-key.ts";
export { parseRetryAfter } from "./retry.ts";
export {
  apiModelId,
  costUsd,
  DEFAULT_API_KEY_ENV,
  DEFAULT_BASE_URL_ENV,
  type ModelSpec,
  type ModelSpecInput,
  ModelSpecSchema,
  modelDirName,
  NO_API_KEY,
  PricingSchema,
} from "./spec.ts";
export type { InvokeOptions, ModelCallResult, ModelClient, TokenUsage } from "./types.ts";
export { addUsage, NO_USAGE, sumUsage, type Usage, UsageSchema, usageOfCall } from "./usage.ts";
