/**
 * The bookkeeping a run keeps over its cells, the same for an in-process run and the
 * queue's coordinator: which cells are finished already (skipped), which are pending, and
 * as each pending cell's record arrives, the running totals its progress event carries.
 */
import type { CellRecord } from "../results/cell-record.ts";
import { type ExperimentPlan, finishedRecord } from "./plan.ts";

/** What a run tells its listener: its start, then each cell as its record is written. */
export type RunEvent =
  | { type: "start"; cells: number; pending: number; runDir: string }
  | { type: "cell"; record: CellRecord; done: number; pending: number; failed: number; costUsd: number; tokens: number; elapsedMs: number };

export class CellTally {
  /** Every record known: the finished ones found at the start, then each one noted. */
  readonly records: Map<string, CellRecord>;
  /** Keys without a finished record at the start, in run order. */
  readonly pending: readonly string[];
  /** How many were finished at the start. */
  readonly skipped: number;
  private done = 0;
  private failed = 0;
  private costUsd = 0;
  private tokens = 0;
  private readonly started = Date.now();

  constructor(
    plan: ExperimentPlan,
    keys: readonly string[],
    options: {
      retryErrors?: boolean | undefined;
      onEvent?: ((event: RunEvent) => void) | undefined;
      /** Called for each unfinished cell in the same pass that reads the finished ones. */
      onUnfinished?: (key: string) => void;
    },
  ) {
    this.records = new Map();
    for (const key of keys) {
      const record = finishedRecord(plan, key, options.retryErrors);
      if (record) this.records.set(key, record);
      else options.onUnfinished?.(key);
    }
    this.pending = keys.filter((key) => !this.records.has(key));
    this.skipped = this.records.size;
    this.onEvent = options.onEvent;
  }

  private readonly onEvent: ((event: RunEvent) => void) | undefined;

  /** A pending cell's record has been written: count it and tell the listener. */
  note(key: string, record: CellRecord): void {
    this.records.set(key, record);
    this.done += 1;
    if (record.status === "failed") this.failed += 1;
    this.costUsd += record.produced.usage.costUsd;
    this.tokens += record.produced.usage.inputTokens + record.produced.usage.outputTokens;
    this.onEvent?.({
      type: "cell",
      record,
      done: this.done,
      pending: this.pending.length,
      failed: this.failed,
      costUsd: this.costUsd,
      tokens: this.tokens,
      elapsedMs: Date.now() - this.started,
    });
  }
}
