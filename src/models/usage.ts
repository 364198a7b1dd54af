/**
 * Adding up model calls. A cache hit carries the usage and cost of the call that
 * first produced its answer, so a rerun from the cache reports the same token and
 * dollar figures as the original run (`costUsd`, what the experiment costs), while
 * `spentUsd` counts only calls that went to a model in this run (what this run paid).
 */
import type { ModelCallResult } from "./types.ts";

export interface UsageTotals {
  calls: number;
  cacheHits: number;
  inputTokens: number;
  outputTokens: number;
  /** Cost of every answer, cached or not: comparable across reruns. */
  costUsd: number;
  /** Cost of the answers fetched in this run only. */
  spentUsd: number;
}

export function emptyUsageTotals(): UsageTotals {
  return { calls: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, spentUsd: 0 };
}

export function addCallToTotals(totals: UsageTotals, call: Pick<ModelCallResult, "usage" | "costUsd" | "cacheHit">): UsageTotals {
  return {
    calls: totals.calls + 1,
    cacheHits: totals.cacheHits + (call.cacheHit ? 1 : 0),
    inputTokens: totals.inputTokens + call.usage.inputTokens,
    outputTokens: totals.outputTokens + call.usage.outputTokens,
    costUsd: totals.costUsd + call.costUsd,
    spentUsd: totals.spentUsd + (call.cacheHit ? 0 : call.costUsd),
  };
}

export function sumUsage(calls: Iterable<Pick<ModelCallResult, "usage" | "costUsd" | "cacheHit">>): UsageTotals {
  let totals = emptyUsageTotals();
  for (const call of calls) totals = addCallToTotals(totals, call);
  return totals;
}
