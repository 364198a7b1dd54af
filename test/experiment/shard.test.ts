/**
 * Shard mode's index: from i/n, Slurm's array variables or a Kubernetes Indexed Job, and
 * the round-robin share it takes. The end-to-end run and merge are in shard.long.test.ts.
 */
import { describe, expect, it } from "vitest";
import { parseShard, shareOf } from "../../src/experiment/shard.ts";

describe("shards", () => {
  it("the shard index comes from i/n, Slurm's array variables or a Kubernetes Indexed Job, and a bad one is refused", () => {
    expect(parseShard("1/3", {})).toEqual({ index: 1, count: 3 });
    expect(parseShard("auto", { SLURM_ARRAY_TASK_ID: "5", SLURM_ARRAY_TASK_MIN: "4", SLURM_ARRAY_TASK_COUNT: "3" })).toEqual({ index: 1, count: 3 });
    expect(parseShard("auto/4", { JOB_COMPLETION_INDEX: "3" })).toEqual({ index: 3, count: 4 });
    expect(parseShard("auto", { SLURM_ARRAY_TASK_ID: "4", SLURM_ARRAY_TASK_MIN: "0", SLURM_ARRAY_TASK_STEP: "2", SLURM_ARRAY_TASK_COUNT: "4" })).toEqual({
      index: 2,
      count: 4,
    });
    expect(() => parseShard("auto", { SLURM_ARRAY_TASK_ID: "3", SLURM_ARRAY_TASK_MIN: "0", SLURM_ARRAY_TASK_STEP: "2", SLURM_ARRAY_TASK_COUNT: "4" })).toThrow(
      /not on the array's step/,
    );
    expect(() => parseShard("auto", { JOB_COMPLETION_INDEX: "0" })).toThrow(/JOB_COMPLETION_INDEX gives the index only: give the count as auto\/n/);
    expect(() => parseShard("auto", {})).toThrow(/neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set/);
    expect(() => parseShard("3/3", {})).toThrow(/shard index 3 is out of range for 3 shard\(s\)/);
    expect(() => parseShard("2", {})).toThrow(/the count is missing/);
    expect(() => parseShard("a/b", {})).toThrow(/expected a shard count/);
    expect(() => parseShard("1/0", {})).toThrow(/expected a shard count ≥ 1/);
    // Round-robin over the run's order: disjoint, covering, balanced.
    const order = Array.from({ length: 7 }, (_, index) => `cell-${index}`);
    const shares = [0, 1, 2].map((index) => shareOf(order, { index, count: 3 }).cells);
    expect(shares.map((share) => share.length)).toEqual([3, 2, 2]);
    expect(shares.flat().sort()).toEqual([...order].sort());
  });
});
