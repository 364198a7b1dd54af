/**
 * Shards for batch schedulers: `iwr run <config> --shard i/n` runs a deterministic share of
 * the cells, so n jobs of a Kubernetes Indexed Job or a Slurm array split a run without a
 * coordinator; `iwr merge` puts their folders together.
 *
 * The share is round-robin over the run's cell order (arm, repeat, task): cell j belongs to
 * shard j mod n. Every shard plans the same cells from the same config, so the shares are
 * disjoint and cover the run, and the heavy arms are spread over all shards.
 *
 * The index may come from the scheduler: `--shard auto` reads Slurm's SLURM_ARRAY_TASK_ID
 * (less SLURM_ARRAY_TASK_MIN, over SLURM_ARRAY_TASK_STEP) and SLURM_ARRAY_TASK_COUNT, or Kubernetes' JOB_COMPLETION_INDEX
 * with the count given as `--shard auto/n` (an Indexed Job does not export its completions).
 */
import { IwrError } from "../errors.ts";
import type { RunShare } from "./plan.ts";

export interface ShardSpec {
  /** 0-based. */
  index: number;
  count: number;
}

const INDEX = /^\d+$/;

function shardError(message: string): never {
  throw new IwrError("CONFIG_INVALID", `--shard: ${message}`);
}

function count(text: string, from: string): number {
  if (!INDEX.test(text) || Number(text) < 1) shardError(`${from}: expected a shard count ≥ 1, got '${text}'`);
  return Number(text);
}

/** Parses `i/n`, `auto` or `auto/n` (the index from the scheduler's environment). */
export function parseShard(text: string, env: NodeJS.ProcessEnv = process.env): ShardSpec {
  const [indexText = "", countText, ...rest] = text.trim().split("/");
  if (rest.length > 0) shardError(`expected i/n, auto or auto/n, got '${text}'`);
  let index: number;
  let total: number | undefined = countText !== undefined ? count(countText, `'${text}'`) : undefined;
  if (indexText === "auto") {
    if (env.SLURM_ARRAY_TASK_ID !== undefined) {
      const id = env.SLURM_ARRAY_TASK_ID;
      const min = env.SLURM_ARRAY_TASK_MIN ?? "0";
      const step = env.SLURM_ARRAY_TASK_STEP ?? "1";
      if (!INDEX.test(id) || !INDEX.test(min) || !INDEX.test(step) || Number(step) < 1)
        shardError(`SLURM_ARRAY_TASK_ID='${id}' / SLURM_ARRAY_TASK_MIN='${min}' / SLURM_ARRAY_TASK_STEP='${step}' are not array indices`);
      // --array=0-6:2 runs ids 0, 2, 4, 6: shards 0 … 3. A list such as 1,3,8 has no step to go by.
      const offset = Number(id) - Number(min);
      if (offset % Number(step) !== 0)
        shardError(`SLURM_ARRAY_TASK_ID ${id} is not on the array's step (min ${min}, step ${step}); for an array given as a list, pass --shard i/n`);
      index = offset / Number(step);
      if (total === undefined) {
        if (env.SLURM_ARRAY_TASK_COUNT === undefined) shardError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: give the count as auto/n");
        total = count(env.SLURM_ARRAY_TASK_COUNT, "SLURM_ARRAY_TASK_COUNT");
      }
    } else if (env.JOB_COMPLETION_INDEX !== undefined) {
      if (!INDEX.test(env.JOB_COMPLETION_INDEX)) shardError(`JOB_COMPLETION_INDEX='${env.JOB_COMPLETION_INDEX}' is not an index`);
      index = Number(env.JOB_COMPLETION_INDEX);
      if (total === undefined) shardError("JOB_COMPLETION_INDEX gives the index only: give the count as auto/n (the Indexed Job's completions)");
    } else {
      shardError(
        "auto: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set (not inside a Slurm array or a Kubernetes Indexed Job); give the shard as i/n",
      );
    }
  } else {
    if (!INDEX.test(indexText)) shardError(`expected i/n (0 ≤ i < n), auto or auto/n, got '${text}'`);
    if (total === undefined) shardError(`expected i/n, got '${text}' (the count is missing)`);
    index = Number(indexText);
  }
  if (index >= total) shardError(`shard index ${index} is out of range for ${total} shard(s) (indices are 0 … ${total - 1})`);
  return { index, count: total };
}

/** The cells of one shard (all of them without a shard). */
export function shareOf(order: readonly string[], shard?: ShardSpec): RunShare {
  if (!shard) return { cells: [...order] };
  return { cells: order.filter((_key, position) => position % shard.count === shard.index), shard };
}
