/**
 * What a model is, as configuration: name, endpoint, key variable, sampling and
 * output limits, image limits, retry policy, concurrency and prices. One zod schema
 * is the single source of the defaults; presets in configs/models/*.yaml only say
 * where a model differs from them.
 */
import { z } from "zod";
import { folderNameProblem, modelDirName } from "../files/safe-name.ts";

/** The benchmark harness reads these two variables; so do we, unless a spec names others. */
export const DEFAULT_API_KEY_ENV = "OPENAI_API_KEY";
export const DEFAULT_BASE_URL_ENV = "OPENAI_BASE_URL";
/** `apiKeyEnv: none` declares an endpoint that takes no key (a local vLLM or Ollama). */
export const NO_API_KEY = "none";

const positiveInt = z.number().int().positive();

export const PricingSchema = z.strictObject({
  /** US dollars per million input (prompt) tokens. */
  inputPerMillion: z.number().nonnegative().default(0),
  /** US dollars per million output (completion) tokens. */
  outputPerMillion: z.number().nonnegative().default(0),
});

export const ModelSpecSchema = z.strictObject({
  /** The name experiments and result folders use (e.g. "gpt-4o", "claude-sonnet-4"); its folder name must be a safe one. */
  name: z
    .string()
    .min(1)
    .superRefine((name, ctx) => {
      const problem = folderNameProblem(modelDirName(name));
      if (problem) ctx.addIssue({ code: "custom", message: `'${name}' cannot name a result folder: ${problem}` });
    }),
  /** The model id sent to the endpoint when it differs from `name` (e.g. a dated snapshot). */
  apiModel: z.string().min(1).optional(),
  /** The endpoint, e.g. "http://127.0.0.1:8000/v1". Wins over `baseURLEnv`. */
  baseURL: z.url().optional(),
  /** Environment variable holding the API key, or "none" for an endpoint without keys. */
  apiKeyEnv: z.string().min(1).default(DEFAULT_API_KEY_ENV),
  /** Environment variable holding the endpoint when `baseURL` is not set. */
  baseURLEnv: z.string().min(1).default(DEFAULT_BASE_URL_ENV),
  /** Sampling temperature; null sends none (reasoning models such as gpt-5 reject anything but their default). */
  temperature: z.number().min(0).max(2).nullable().default(0),
  /** Output budget per call (sent as max_tokens, or max_completion_tokens for reasoning models). */
  maxTokens: positiveInt.default(16_384),
  /** Images per request, asset sheets and frames together (docs/protocol.md §2). */
  maxImages: positiveInt.default(70),
  /** Video frames per request at most. */
  maxFrames: positiveInt.default(64),
  /** When set, every image is resized so its longer side is at most this many pixels. */
  maxImageSide: positiveInt.optional(),
  /** Limit for one HTTP attempt, in milliseconds. */
  timeoutMs: positiveInt.default(600_000),
  /** Retries after the first attempt, for 429, 5xx and connection failures. */
  maxRetries: z.number().int().min(0).max(10).default(2),
  /** First backoff delay; doubles per retry (with jitter) up to `retryMaxDelayMs`. */
  retryBaseDelayMs: z.number().int().min(0).default(1_000),
  /** Cap on any single wait, including one asked for by a `retry-after` header. */
  retryMaxDelayMs: z.number().int().min(0).default(60_000),
  /** Requests in flight at once to this spec's endpoint (shared by every spec on the same baseURL). */
  concurrency: positiveInt.default(4),
  pricing: PricingSchema.default({ inputPerMillion: 0, outputPerMillion: 0 }),
  /** Extra request-body fields sent as they are (e.g. a provider's `thinking` switch); part of the cache key. */
  extraParams: z.record(z.string(), z.unknown()).default({}),
});

export type ModelSpec = z.infer<typeof ModelSpecSchema>;
/** What a YAML preset or an override may say: every field but `name` optional. */
export type ModelSpecInput = z.input<typeof ModelSpecSchema>;

/** The id sent in requests and used for cache entries. */
export function apiModelId(spec: ModelSpec): string {
  return spec.apiModel ?? spec.name;
}

export { modelDirName };

/** Dollars for a number of tokens at a spec's prices. */
export function costUsd(spec: Pick<ModelSpec, "pricing">, usage: { inputTokens: number; outputTokens: number }): number {
  return (usage.inputTokens * spec.pricing.inputPerMillion + usage.outputTokens * spec.pricing.outputPerMillion) / 1_000_000;
}
