/**
 * The model layer: settings, client, response cache, usage. Import from here; code that
 * must not load the model client (planning and checking a finished run, the agent's settings)
 * imports the light modules (spec, presets, endpoint, request-key, usage, preflight) directly.
 */

export {
  type CacheEntry,
  type CacheMode,
  defaultCacheDir,
  openResponseCache,
  parseCacheMode,
} from "./cache.ts";
export { cacheStats, clearCache } from "./cache-admin.ts";
export { createModelClient, forRepeat, forTrack, SAMPLES_PER_REPEAT } from "./client.ts";
export { publicModelSpec, resolveBaseURL } from "./endpoint.ts";
export { harnessLimitsFor, withHarnessLimits } from "./harness-limits.ts";
export { preflightModel } from "./preflight.ts";
export { listModelPresets, loadModelSpec } from "./presets.ts";
export { describeRequest } from "./request-key.ts";
export { parseRetryAfter } from "./retry.ts";
export {
  type ModelSpec,
  type ModelSpecInput,
  ModelSpecSchema,
  modelDirName,
} from "./spec.ts";
export type { ModelCallResult, ModelClient } from "./types.ts";
export { addUsage, NO_USAGE, sumUsage, type Usage, UsageSchema, usageOfCall } from "./usage.ts";
