/**
 * The one usage record: what model calls cost, added up the same way by the single-pass
 * run, the agent's nodes and an experiment's cells.
 *
 * A cache hit carries the usage and cost of the call that first produced its answer, so a
 * rerun from the cache reports the same token and dollar figures as the original run
 * (`costUsd`, what the experiment costs), while `spentUsd` counts only calls that went to
 * a model in this run (what this run paid).
 */
import { z } from "zod";
import type { ModelCallResult } from "./types.ts";

export const UsageSchema = z.object({
  calls: z.number().int().nonnegative(),
  cacheHits: z.number().int().nonnegative(),
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  /** Cost of every answer, cached or not: comparable across reruns. */
  costUsd: z.number().nonnegative(),
  /** Cost of the answers fetched in this run only. */
  spentUsd: z.number().nonnegative().default(0),
  /** Time spent waiting on the model (summed over calls, not wall time). */
  latencyMs: z.number().nonnegative().default(0),
  /** Images sent. */
  images: z.number().int().nonnegative().default(0),
});
export type Usage = z.infer<typeof UsageSchema>;

export const NO_USAGE: Usage = Object.freeze({ calls: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, spentUsd: 0, latencyMs: 0, images: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    calls: a.calls + b.calls,
    cacheHits: a.cacheHits + b.cacheHits,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
    spentUsd: a.spentUsd + b.spentUsd,
    latencyMs: a.latencyMs + b.latencyMs,
    images: a.images + b.images,
  };
}

/** The usage of one call (a cache hit costs this run nothing). */
export function usageOfCall(call: Pick<ModelCallResult, "usage" | "costUsd" | "cacheHit"> & { latencyMs?: number }, images = 0): Usage {
  return {
    calls: 1,
    cacheHits: call.cacheHit ? 1 : 0,
    inputTokens: call.usage.inputTokens,
    outputTokens: call.usage.outputTokens,
    costUsd: call.costUsd,
    spentUsd: call.cacheHit ? 0 : call.costUsd,
    latencyMs: call.latencyMs ?? 0,
    images,
  };
}

export function sumUsage(usages: Iterable<Usage>): Usage {
  let total = NO_USAGE;
  for (const usage of usages) total = addUsage(total, usage);
  return total;
}
