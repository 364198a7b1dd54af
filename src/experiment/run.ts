/**
 * `iwr run <config.yaml>`: every (task, arm, repeat) cell of an experiment through the
 * cell graph (agents/experiment: the arm's generator, then the fixed evaluator), a few
 * cells at a time, into one run folder; then the report.
 *
 * Resume: a cell is finished when its cell.json carries the cell's key (the arm's
 * settings, the repeat, the task's content and the evaluator's settings); a rerun skips
 * it, so a warm rerun makes no model call and no replay. A cell without cell.json (a run
 * killed midway) is run again, and its parts resume on their own terms (a single-pass
 * page made by the same request is kept; the agent continues from its checkpoint; an
 * eval.json that scored the same page is kept). A failed cell is finished too, with its
 * error recorded; `retryErrors` runs the failed ones again. Every file is written
 * atomically.
 *
 * Repeats: model and module arms run `repeats` times per task, each repeat a new sample
 * (the repeat index is part of every request's cache key). Calibration arms and pages
 * made elsewhere are deterministic and run once.
 */
import { writeFileAtomic } from "../files/atomic.ts";
import { lockFolder } from "../files/folder-lock.ts";
import { redactString } from "../log/redact.ts";
import type { CellOutcome, CellRecord } from "../results/cell-record.ts";
import { RUN_LOCK, type RunFiles } from "../results/layout.ts";
import { cellWeight, taskByTask, WeightedSlots } from "./cell-order.ts";
import { CellTally, type RunEvent } from "./cell-tally.ts";
import { type ExperimentConfig, isLocalArm } from "./config.ts";
import { type ExperimentPlan, planExperiment, preflightModels, writeRunRecord } from "./plan.ts";
import { type ShardSpec, shareOf } from "./shard.ts";

export type { RunEvent } from "./cell-tally.ts";

export interface RunExperimentOptions {
  /** Run failed cells again (default: a failed cell is finished, its error kept). */
  retryErrors?: boolean;
  cacheDir?: string;
  statesCacheDir?: string;
  onEvent?: (event: RunEvent) => void;
  /** Set to stop starting new cells (SIGINT); cells in progress finish. */
  signal?: AbortSignal;
  /** Set a grace period after `signal`: model calls and agent nodes still in flight are cancelled (their cells left unfinished). */
  hardStop?: AbortSignal;
  /** A module generator's time limit per cell (default 10 minutes). */
  moduleTimeoutMs?: number;
  /** Run only this shard's share of the cells (`--shard i/n`); the folder then holds that share. */
  shard?: ShardSpec;
}

export interface RunSummary {
  runDir: string;
  files: RunFiles;
  cells: CellRecord[];
  ran: number;
  skipped: number;
  failed: number;
  /** Cells left without a record (the run was stopped): a rerun runs them. */
  unfinished: number;
}

/** Runs the experiment; a config or environment problem throws before any work, a cell's failure is recorded and the run goes on. */
export async function runExperiment(config: ExperimentConfig, options: RunExperimentOptions = {}): Promise<RunSummary> {
  const plan = await planExperiment(config);
  // One run per folder: a second one would delete and rewrite this one's pages while they are scored.
  const lock = lockFolder(plan.files.dir, { name: RUN_LOCK, command: `iwr run ${config.file}`, what: "run folder" });
  try {
    return await runPlanned(plan, config, options);
  } finally {
    lock.release();
  }
}

async function runPlanned(plan: ExperimentPlan, config: ExperimentConfig, options: RunExperimentOptions): Promise<RunSummary> {
  const share = shareOf(plan.order, options.shard);
  const tally = new CellTally(plan, share.cells, options);
  const { pending } = tally;
  await writeRunRecord(plan, share, { keepCurrent: pending.length === 0 });
  options.onEvent?.({ type: "start", cells: share.cells.length, pending: pending.length, runDir: plan.files.dir });

  if (pending.length > 0) {
    await preflightModels(plan, pending);
    const controller = new AbortController();
    const stop = () => controller.abort();
    options.signal?.addEventListener("abort", stop);
    // Loaded only when there is work: a rerun of a finished run loads no generator, evaluator or browser.
    const { openCellRunner } = await import("./cell-runner.ts");
    const runner = await openCellRunner(plan, {
      signal: controller.signal,
      ...(options.hardStop ? { hardStop: options.hardStop } : {}),
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}),
      ...(options.moduleTimeoutMs ? { moduleTimeoutMs: options.moduleTimeoutMs } : {}),
    });
    // Two stages: a model arm's page is made in the first (`concurrency` wide: the model
    // calls in flight), then scored in the second (`evaluatorWorkers` wide, as many pages
    // as the evaluator replays at once), so a long generation (an agent's rounds) does not
    // keep the pages already made from being scored meanwhile. A page made here without a
    // model (calibration, a results folder) is made in its scoring slot: it does not queue
    // behind the model arms' generations, and is not made long before it can be scored.
    // In each stage a freed slot goes to the waiting cell expected to take longest
    // (cell-order.ts), so no long cell is left to run alone at the end.
    // A stop starts no cell; a cell that has started (its page being made) finishes.
    const generating = new WeightedSlots(config.concurrency);
    const scoring = new WeightedSlots(config.evaluatorWorkers);
    const score = async (key: string, produced: CellOutcome): Promise<void> => {
      const record = await runner.evaluateProduced(key, produced);
      // A cell cut short by the stop (an agent stopped at a checkpoint, a draft's scoring or
      // self-check broken by it) is unfinished, not failed: no cell.json, a rerun resumes it.
      if (controller.signal.aborted && isBroken(record)) return;
      await writeFileAtomic(plan.files.cellRecord(plan.cells.get(key)!.dir), `${redactString(JSON.stringify(record, null, 2))}\n`);
      tally.note(key, record);
    };
    const runCell = async (key: string): Promise<void> => {
      const cell = plan.cells.get(key)!;
      const weight = cellWeight(cell);
      if (isLocalArm(cell.arm.parsed.type)) {
        return scoring.run(weight, async () => {
          if (!controller.signal.aborted) await score(key, await runner.generate(key));
        });
      }
      const produced = await generating.run(weight, async () => (controller.signal.aborted ? undefined : runner.generate(key)));
      if (produced) await scoring.run(weight, () => score(key, produced));
    };
    try {
      await Promise.all(taskByTask(plan, pending).map(runCell));
    } finally {
      options.signal?.removeEventListener("abort", stop);
      await runner.close();
    }
  }
  return summaryOf(plan, share.cells, tally.records, tally.skipped);
}

/** A record that a stop may have cut short: failed, or with a draft's scoring or the self-check broken. */
export function isBroken(record: CellRecord): boolean {
  return record.status === "failed" || record.iterations.some((entry) => entry.error) || record.selfCheck?.error !== undefined;
}

/** The summary of a run over `keys`, from the records found or made. */
export function summaryOf(plan: ExperimentPlan, keys: readonly string[], records: ReadonlyMap<string, CellRecord>, skipped: number): RunSummary {
  const all = keys.flatMap((key) => (records.has(key) ? [records.get(key)!] : []));
  return {
    runDir: plan.files.dir,
    files: plan.files,
    cells: all,
    ran: all.length - skipped,
    skipped,
    failed: all.filter((record) => record.status === "failed").length,
    unfinished: keys.length - all.length,
  };
}
