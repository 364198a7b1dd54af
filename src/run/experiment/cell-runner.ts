/**
 * Runs an experiment's cells through the cell graph (agents/experiment), and owns what that
 * takes: the arm resources, the fixed evaluator (opened on first use, closed by `close`)
 * and the self-check's metric. An in-process run runs whole cells; a queue worker runs the
 * generator side and the evaluator side of a cell as separate jobs, through the same graph.
 */
import { buildCellGraph, type CellValues } from "../../../agents/experiment/graph.ts";
import type { CellOutcome, CellRecord } from "../../results/cell-record.ts";
import { log } from "../../log/logger.ts";
import { createVisualMetric } from "../../evaluator/metrics/visual.ts";
import type { Evaluator } from "../../evaluator/evaluate-task.ts";
import { createEvaluator } from "../evaluate.ts";
import type { ArmResources } from "./arms.ts";
import { cellWork } from "./cell-work.ts";
import { cellRecordOf, type ExperimentPlan } from "./plan.ts";

const logger = log("experiment");

export interface CellRunnerOptions {
  cacheDir?: string;
  statesCacheDir?: string;
  /** Stops agents at their next node and module generators at once. */
  signal: AbortSignal;
  /** A module generator's time limit per cell (default 10 minutes). */
  moduleTimeoutMs?: number;
  /** Pages the evaluator replays at once (default: the config's evaluatorWorkers). */
  evaluatorWorkers?: number;
}

export interface CellRunner {
  /** A whole cell: its page, then the evaluator (and the drafts' scores, the self-check). */
  run(key: string): Promise<CellRecord>;
  /** The generator side only: the cell's page and what it cost. Never throws for a generator's failure. */
  generate(key: string): Promise<CellOutcome>;
  /** The evaluator side of a cell whose page `produced` describes. */
  evaluateProduced(key: string, produced: CellOutcome): Promise<CellRecord>;
  close(): Promise<void>;
}

export async function openCellRunner(plan: ExperimentPlan, options: CellRunnerOptions): Promise<CellRunner> {
  const { config } = plan;
  const resources: ArmResources = {
    specs: plan.specs,
    modules: plan.modules,
    cacheMode: config.cache,
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}),
    signal: options.signal,
    log: (message) => logger.info(message),
    moduleTimeoutMs: options.moduleTimeoutMs ?? 10 * 60_000,
    protocol: config.evaluator.protocol,
  };
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
  const selfCheck = config.selfCheck === "given" ? { metric: await createVisualMetric(), ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}) } : undefined;
  const work = cellWork({ cells: plan.cells, resources, evaluator: openEvaluator, pairing: config.evaluator.pairing, ...(selfCheck ? { selfCheck } : {}) });
  const graph = buildCellGraph();
  const invoke = async (key: string, cellWorkFor = work) => {
    const values = (await graph.invoke({ cellKey: key }, { context: { work: cellWorkFor } })) as CellValues;
    return cellRecordOf(key, plan.cells.get(key)!, values);
  };
  return {
    run: (key) => invoke(key),
    generate: (key) => work.generate(key),
    // The same graph with its generator answering what the generation job made.
    evaluateProduced: (key, produced) => invoke(key, { ...work, generate: async () => produced }),
    async close() {
      if (!evaluator) return;
      const opened = await evaluator.catch(() => undefined);
      await opened?.close?.();
    },
  };
}
