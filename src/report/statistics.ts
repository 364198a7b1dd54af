/**
 * The statistics of a report: the percentile bootstrap interval of a mean, with a small
 * seeded generator so the same run gives the same interval, and the mean and sum the
 * report's tables use (an empty list's mean is 0, as the benchmark's aggregation has it).
 */
import { sum as sumOf } from "simple-statistics";
import { mean as benchmarkMean } from "../evaluator/aggregate.ts";

export const mean = benchmarkMean;
export const sum = (values: readonly number[]): number => sumOf([...values]);

/** A small seeded generator (mulberry32): the same run gives the same interval. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Percentile bootstrap interval of the mean of `values` (resampling the tasks). */
export function bootstrapMeanInterval(values: readonly number[], resamples: number, seed = 1): [number, number] {
  if (values.length === 0) return [0, 0];
  const random = seededRandom(seed);
  const means: number[] = [];
  for (let index = 0; index < resamples; index++) {
    let total = 0;
    for (let draw = 0; draw < values.length; draw++) total += values[Math.floor(random() * values.length)]!;
    means.push(total / values.length);
  }
  means.sort((a, b) => a - b);
  const at = (q: number) => means[Math.min(means.length - 1, Math.max(0, Math.floor(q * means.length)))]!;
  return [at(0.025), at(0.975)];
}
