/**
 * Runs an experiment's cells through the cell graph (agents/experiment), and owns what that
 * takes: the arm resources, the fixed evaluator (opened on first use, closed by `close`)
 * and the self-check's metric. A cell's generator side and evaluator side run apart: an
 * in-process run holds them in two stages of their own widths (run.ts), a queue worker
 * runs them as separate jobs. The evaluator side goes through the cell graph.
 */
import { buildCellGraph, type CellValues } from "../../agents/experiment/graph.ts";
import { createEvaluator } from "../evaluator/create-evaluator.ts";
import type { Evaluator } from "../evaluator/evaluate-task.ts";
import { log } from "../log/logger.ts";
import { createVisualMetric } from "../metrics/visual.ts";
import type { CellOutcome, CellRecord } from "../results/cell-record.ts";
import type { ArmResources } from "./arms.ts";
import { cellWork } from "./cell-work.ts";
import { cellRecordOf, type ExperimentPlan } from "./plan.ts";

const logger = log("experiment");

export interface CellRunnerOptions {
  cacheDir?: string;
  statesCacheDir?: string;
  /** Stops agents at their next node and module generators at once. */
  signal: AbortSignal;
  /** Cancels model calls and agent nodes still in flight (a grace period after `signal`). */
  hardStop?: AbortSignal;
  /** A module generator's time limit per cell (default 10 minutes). */
  moduleTimeoutMs?: number;
  /** Pages the evaluator replays at once (default: the config's evaluatorWorkers). */
  evaluatorWorkers?: number;
}

export interface CellRunner {
  /** The generator side only: the cell's page and what it cost. Never throws for a generator's failure. */
  generate(key: string): Promise<CellOutcome>;
  /** The evaluator side of a cell whose page `produced` describes. */
  evaluateProduced(key: string, produced: CellOutcome): Promise<CellRecord>;
  close(): Promise<void>;
}

export async function openCellRunner(plan: ExperimentPlan, options: CellRunnerOptions): Promise<CellRunner> {
  const { config } = plan;
  let evaluator: Promise<Evaluator> | undefined;
  const openEvaluator = () =>
    (evaluator ??= createEvaluator({
      profile: config.evaluator.protocol,
      judge: config.evaluator.judge,
      grounding: config.evaluator.grounding,
      judgeModel: config.evaluator.judgeModel,
      judgeRepeats: config.evaluator.judgeRepeats,
      ...(config.evaluator.baseURL ? { baseURL: config.evaluator.baseURL } : {}),
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      workers: options.evaluatorWorkers ?? config.evaluatorWorkers,
    }));
  const resources: ArmResources = {
    specs: plan.specs,
    modules: plan.modules,
    cacheMode: config.cache,
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}),
    signal: options.signal,
    ...(options.hardStop ? { hardStop: options.hardStop } : {}),
    log: (message) => logger.info(message),
    moduleTimeoutMs: options.moduleTimeoutMs ?? 10 * 60_000,
    protocol: config.evaluator.protocol,
    // Agent arms with oracle feedback are told the very evaluator's verdict on their drafts.
    oracle: { evaluator: openEvaluator, pairing: config.evaluator.pairing },
  };
  const selfCheck =
    config.selfCheck === "given"
      ? { metric: await createVisualMetric(), ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}) }
      : undefined;
  const work = cellWork({ cells: plan.cells, resources, evaluator: openEvaluator, pairing: config.evaluator.pairing, ...(selfCheck ? { selfCheck } : {}) });
  const graph = buildCellGraph();
  return {
    generate: (key) => work.generate(key),
    // The cell graph, its generator answering with the page already made.
    async evaluateProduced(key, produced) {
      const values = (await graph.invoke({ cellKey: key }, { context: { work: { ...work, generate: async () => produced } } })) as CellValues;
      return cellRecordOf(key, plan.cells.get(key)!, values);
    },
    async close() {
      if (!evaluator) return;
      const opened = await evaluator.catch(() => undefined);
      await opened?.close?.();
    },
  };
}
