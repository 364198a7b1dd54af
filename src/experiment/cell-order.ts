/**
 * Which cell an `iwr run` starts next. Each stage (making pages with a model, scoring
 * pages) has a fixed number of slots; a freed slot goes to the waiting cell expected to
 * take longest, so the long cells start early and the run does not end with one long cell
 * running alone while the cores idle (longest processing time first). A cell whose page
 * a model has just made competes for a scoring slot with the calibration cells still
 * waiting, by the same measure, instead of queueing behind all of them. Ties go to the
 * cell that asked first, and cells ask task by task (taskByTask).
 *
 * A cell's expected cost is what its scoring replays: every replay takes the protocol's
 * waits and one OCR reading per step, so it grows with the task's number of actions; an
 * agent's cell also scores each of its drafts (up to maxIterations + 1 of them).
 */
import { AgentSettingsSchema } from "../../agents/reconstruct/settings.ts";
import type { Cell } from "./cell.ts";

const DEFAULT_MAX_ITERATIONS = AgentSettingsSchema.parse({}).maxIterations;

/** How many replays of its task scoring the cell takes, times the task's length (its actions, plus the page's first screen). */
export function cellWeight(cell: Pick<Cell, "arm" | "task">): number {
  const steps = cell.task.truth.actions.length + 1;
  const drafts = cell.arm.parsed.type === "agent" ? (cell.arm.agent?.maxIterations ?? DEFAULT_MAX_ITERATIONS) + 1 : 0;
  return steps * (1 + drafts);
}

/**
 * The cells in the order they ask for a slot, which breaks ties of weight: task by task
 * (arms and repeats in the plan's order within a task), not arm by arm. A task's first
 * scored cell reads the true page's states for all of its cells (OCR: CPU), while the
 * others mostly wait out their replays; asking arm by arm ran every task's first cell at
 * once (the cores short) and then every light cell together (the cores idle).
 */
export function taskByTask(plan: { cells: ReadonlyMap<string, Pick<Cell, "task">> }, keys: readonly string[]): string[] {
  const rank = new Map<number, number>();
  for (const key of keys) {
    const id = plan.cells.get(key)!.task.id;
    if (!rank.has(id)) rank.set(id, rank.size);
  }
  const rankOf = (key: string) => rank.get(plan.cells.get(key)!.task.id)!;
  return [...keys].sort((a, b) => rankOf(a) - rankOf(b));
}

interface Waiting {
  weight: number;
  arrival: number;
  start: () => void;
}

/**
 * `width` jobs at a time; a freed slot goes to the heaviest waiting job, ties to the one
 * that asked first. Jobs asked for in one go (a run asks for all its cells in one loop)
 * are weighed together: free slots are handed out once the asking is over, not to the
 * first few asked, which would otherwise start before the heaviest had been seen.
 */
export class WeightedSlots {
  private running = 0;
  private arrivals = 0;
  private handOutPending = false;
  private readonly waiting: Waiting[] = [];

  constructor(private readonly width: number) {}

  async run<T>(weight: number, job: () => Promise<T>): Promise<T> {
    await this.slot(weight);
    try {
      return await job();
    } finally {
      this.running -= 1;
      this.next();
    }
  }

  private slot(weight: number): Promise<void> {
    return new Promise((start) => {
      this.waiting.push({ weight, arrival: this.arrivals++, start });
      if (this.handOutPending) return;
      this.handOutPending = true;
      queueMicrotask(() => {
        this.handOutPending = false;
        this.next();
      });
    });
  }

  private next(): void {
    while (this.running < this.width && this.waiting.length > 0) {
      let best = 0;
      for (let index = 1; index < this.waiting.length; index++) {
        const [candidate, chosen] = [this.waiting[index]!, this.waiting[best]!];
        if (candidate.weight > chosen.weight || (candidate.weight === chosen.weight && candidate.arrival < chosen.arrival)) best = index;
      }
      const [chosen] = this.waiting.splice(best, 1);
      this.running += 1;
      chosen!.start();
    }
  }
}
