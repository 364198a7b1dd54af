/**
 * The run's scheduling (src/experiment/cell-order.ts): a freed slot goes to the heaviest
 * waiting cell, never more cells than slots run at once, and a cell's weight follows what
 * its scoring replays.
 */
import { describe, expect, it } from "vitest";
import type { Cell } from "../../src/experiment/cell.ts";
import { cellWeight, taskByTask, WeightedSlots } from "../../src/experiment/cell-order.ts";

/** A job that records its start and ends when told. */
function gatedJob(name: string, started: string[]) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    job: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("WeightedSlots", () => {
  it("runs at most its width at once and gives each freed slot to the heaviest waiting job (ties: first come)", async () => {
    const slots = new WeightedSlots(2);
    const started: string[] = [];
    const jobs = new Map(["a", "b", "light", "heavy", "middle", "middle-later"].map((name) => [name, gatedJob(name, started)]));
    const weights: Record<string, number> = { a: 1, b: 1, light: 2, heavy: 9, middle: 5, "middle-later": 5 };
    const runs = [...jobs].map(([name, { job }]) => slots.run(weights[name]!, job));
    await tick();
    // Asked in one go: the two heaviest start, though "a" and "b" asked first.
    expect(started).toEqual(["heavy", "middle"]);
    jobs.get("heavy")!.finish();
    await tick();
    expect(started).toEqual(["heavy", "middle", "middle-later"]);
    jobs.get("middle")!.finish();
    jobs.get("middle-later")!.finish();
    await tick();
    expect(started).toEqual(["heavy", "middle", "middle-later", "light", "a"]);
    // A job asked for later, heavier than those still waiting, goes before them.
    const late = gatedJob("late", started);
    const lateRun = slots.run(3, late.job);
    jobs.get("light")!.finish();
    await tick();
    expect(started).toEqual(["heavy", "middle", "middle-later", "light", "a", "late"]);
    for (const { finish } of [...jobs.values(), late]) finish();
    expect(await Promise.all(runs)).toEqual(["a", "b", "light", "heavy", "middle", "middle-later"]);
    expect(await lateRun).toBe("late");
  });

  it("frees the slot of a job that fails", async () => {
    const slots = new WeightedSlots(1);
    await expect(slots.run(1, async () => Promise.reject(new Error("broken page")))).rejects.toThrow("broken page");
    expect(await slots.run(1, async () => "next")).toBe("next");
  });
});

describe("cellWeight", () => {
  const cell = (actions: number, type: string, agent?: { maxIterations: number }) =>
    ({ task: { truth: { actions: new Array(actions).fill({}) } }, arm: { parsed: { type }, ...(agent ? { agent } : {}) } }) as unknown as Cell;

  it("grows with the task's actions, and an agent's cell counts each draft it scores", () => {
    expect(cellWeight(cell(5, "reference"))).toBe(6);
    expect(cellWeight(cell(11, "blank"))).toBeGreaterThan(cellWeight(cell(5, "reference")));
    expect(cellWeight(cell(5, "single-pass"))).toBe(6);
    expect(cellWeight(cell(5, "agent", { maxIterations: 2 }))).toBe(6 * 4);
    expect(cellWeight(cell(5, "agent"))).toBeGreaterThan(cellWeight(cell(5, "agent", { maxIterations: 1 })));
  });
});

describe("taskByTask", () => {
  it("asks task by task, keeping the plan's order of arms and repeats within a task", () => {
    // The plan's order: arm by arm, then repeat, then task.
    const keys = ["ref/0/7", "ref/0/3", "blank/0/7", "blank/0/3", "blank/1/7", "mutant/0/3"];
    const cells = new Map(keys.map((key) => [key, { task: { id: Number(key.split("/")[2]) } } as unknown as Cell]));
    expect(taskByTask({ cells }, keys)).toEqual(["ref/0/7", "blank/0/7", "blank/1/7", "ref/0/3", "blank/0/3", "mutant/0/3"]);
  });
});
