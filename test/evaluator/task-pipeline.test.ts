/**
 * How a run schedules tasks: `workers` pages open at once, twice as many tasks in
 * flight (the next replay overlaps the last one's scoring), heaviest first, results in
 * the tasks' own order.
 */
import { describe, expect, it } from "vitest";
import { createPageSlots, runPipelined, TASKS_IN_FLIGHT_PER_PAGE } from "../../src/evaluator/task-pipeline.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Counts how many callers are inside at once. */
function gauge() {
  let inside = 0;
  let most = 0;
  return {
    async during<T>(work: () => Promise<T>): Promise<T> {
      inside++;
      most = Math.max(most, inside);
      try {
        return await work();
      } finally {
        inside--;
      }
    },
    get most() {
      return most;
    },
  };
}

describe("runPipelined + page slots", () => {
  it.each([1, 2])("with %i worker(s): at most that many pages open, twice as many tasks in flight", async (workers) => {
    const slots = createPageSlots(workers);
    const pages = gauge();
    const inFlight = gauge();
    const tasks = Array.from({ length: 8 }, (_, id) => ({ id, steps: 3 }));
    const results = await runPipelined(tasks, { workers, weight: (task) => task.steps }, (task) =>
      inFlight.during(async () => {
        await slots(() => pages.during(() => sleep(15))); // the replay: holds a page
        await sleep(40); // judging and scoring: no page
        return task.id;
      }),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(pages.most).toBe(workers);
    expect(inFlight.most).toBe(workers * TASKS_IN_FLIGHT_PER_PAGE);
  });

  it("starts the heaviest tasks first (ties keep their order) and returns results in the tasks' order", async () => {
    const started: string[] = [];
    const tasks = [
      { name: "a", steps: 2 },
      { name: "b", steps: 9 },
      { name: "c", steps: 5 },
      { name: "d", steps: 9 },
    ];
    const results = await runPipelined(tasks, { workers: 1, weight: (task) => task.steps }, async (task) => {
      started.push(task.name);
      await sleep(5);
      return task.name.toUpperCase();
    });
    expect(started).toEqual(["b", "d", "c", "a"]);
    expect(results).toEqual(["A", "B", "C", "D"]);
  });

  it("a task that throws rejects the run with its error", async () => {
    await expect(
      runPipelined([1, 2, 3], { workers: 1, weight: () => 1 }, async (n) => {
        if (n === 2) throw new Error("task 2 broke");
        return n;
      }),
    ).rejects.toThrow("task 2 broke");
  });
});
