/**
 * How a run evaluates many tasks in one process. A task's evaluation has a browser part
 * (open the page, replay: mostly the protocol's waits) and a CPU part (OCR, judging,
 * scoring) that can finish after the replay. So `workers` pages open or replay at once
 * (the evaluator's page slots) while up to twice as many tasks are in flight: the
 * next task replays while the previous one is judged and scored. Tasks start longest
 * first (most actions), so no long task is left to run alone at the end.
 */
import pLimit from "p-limit";
import type { Task } from "../tasks/schema.ts";
import type { PageSlots } from "./evaluate-task.ts";

/** Tasks in flight per page slot: one replaying, one being judged and scored. */
export const TASKS_IN_FLIGHT_PER_PAGE = 2;

/** The weight runs schedule tasks by: the trajectory's length, which the replay's time follows. */
export function trajectoryLength(task: Task): number {
  return task.truth.actions.length;
}

/** The page slots for `workers` pages opening or replaying at once. */
export function createPageSlots(workers: number): PageSlots {
  const limit = pLimit(workers);
  return (open) => limit(open);
}

/**
 * Runs `work` for every item, `workers × TASKS_IN_FLIGHT_PER_PAGE` at a time, heaviest
 * first by `weight`; the results come back in the items' own order.
 */
export async function runPipelined<Item, Result>(
  items: readonly Item[],
  options: { workers: number; weight: (item: Item) => number },
  work: (item: Item) => Promise<Result>,
): Promise<Result[]> {
  const limit = pLimit(options.workers * TASKS_IN_FLIGHT_PER_PAGE);
  const results = new Array<Result>(items.length);
  // A stable sort: equal weights keep the items' order.
  const order = items.map((item, position) => ({ item, position })).sort((a, b) => options.weight(b.item) - options.weight(a.item));
  await Promise.all(
    order.map(({ item, position }) =>
      limit(async () => {
        results[position] = await work(item);
      }),
    ),
  );
  return results;
}
