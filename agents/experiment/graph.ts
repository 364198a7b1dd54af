/**
 * One experiment cell (task × arm × repeat) as a graph:
 *
 *   START → generate → evaluate ─┬──────────────────────────┬─→ [self-check] → END
 *                                └─→ score-iterations ───────┘
 *                                    (agent arms with saved drafts)   (when the experiment asks)
 *
 * `generate` is the arm's generator (single pass, the agent's own graph, a calibration
 * page, a researcher's module, or a page made elsewhere); `evaluate` is the fixed
 * evaluator, the same for every arm and unchanged; `score-iterations` scores each draft
 * an agent saved, for the score-by-iteration curve; `self-check` computes the agent's
 * feedback signal on the page (given track) to set beside the evaluator's Final. Those
 * scores are reported only: they reach no generator, and the agent has finished before
 * they exist.
 *
 * State holds the cell's identity and its outcomes (small records, no images); the
 * resources (task, evaluator, model clients) come in as LangGraph `context`.
 */
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { END, START, StateGraph, StateSchema, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { IwrError, toErrorRecord } from "../../src/errors.ts";
import type { VisualMetric } from "../../src/evaluator/metrics/visual.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { runSelfCheck } from "../../src/selfcheck/self-check.ts";
import type { Evaluator } from "../../src/evaluator/evaluate-task.ts";
import type { PairingMode } from "../../src/evaluator/settings.ts";
import { producePage, type ArmResources, type Cell } from "../../src/experiment/arms.ts";
import { evaluateOneTask } from "../../src/run/evaluate.ts";

const ErrorSchema = z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });
const UsageSchema = z.object({ calls: z.number(), inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number(), latencyMs: z.number(), cacheHits: z.number() });

export const CellOutcomeSchema = z.object({
  status: z.enum(["made", "failed"]),
  error: ErrorSchema.optional(),
  usage: UsageSchema,
  wallMs: z.number(),
  selfScore: z.number().optional(),
  iterations: z.array(z.object({ draft: z.number(), round: z.number(), dir: z.string(), selfScore: z.number().optional() })).optional(),
});

export const CellEvaluationSchema = z.object({
  status: z.enum(["evaluated", "skipped", "failed"]),
  final: z.number().optional(),
  ifs: z.number().optional(),
  error: ErrorSchema.optional(),
  wallMs: z.number(),
});

export const IterationScoreSchema = z.object({
  draft: z.number(),
  round: z.number(),
  selfScore: z.number().optional(),
  final: z.number().optional(),
  error: ErrorSchema.optional(),
});

export const CellSelfCheckSchema = z.object({
  selfScore: z.number().optional(),
  error: ErrorSchema.optional(),
  wallMs: z.number(),
});

export const CellState = new StateSchema({
  /** Which cell: the key of the Cell in context.cells. */
  cellKey: z.string(),
  produced: CellOutcomeSchema.optional(),
  evaluation: CellEvaluationSchema.optional(),
  iterations: z.array(IterationScoreSchema).default(() => []),
  /** The self-check of the cell's page (given track), when the experiment asks for it. */
  selfCheck: CellSelfCheckSchema.optional(),
});
export type CellValues = typeof CellState.State;

export interface CellContext {
  cells: ReadonlyMap<string, Cell>;
  resources: ArmResources;
  evaluator: Evaluator;
  pairing: PairingMode;
  /** Self-check every page (given track) with this metric; absent: no self-check node runs. */
  selfCheck?: { metric: VisualMetric; statesCacheDir?: string };
}
type CellConfig = LangGraphRunnableConfig<CellContext>;

const present = (value: unknown) => typeof value === "object" && value !== null;
const CellContextSchema = z.object({
  cells: z.custom<ReadonlyMap<string, Cell>>((value) => value instanceof Map, { message: "expected the run's cells (a Map)" }),
  resources: z.custom<ArmResources>(present, { message: "expected the arms' resources" }),
  evaluator: z.custom<Evaluator>(present, { message: "expected the evaluator (createEvaluator)" }),
  pairing: z.custom<PairingMode>((value) => typeof value === "string"),
  selfCheck: z.custom<{ metric: VisualMetric; statesCacheDir?: string }>(present).optional(),
});

function cellOf(state: Pick<CellValues, "cellKey">, config: CellConfig): { cell: Cell; context: CellContext } {
  const context = config.context;
  const cell = context?.cells.get(state.cellKey);
  if (!context || !cell) throw new IwrError("CONFIG_INVALID", `experiment cell graph invoked without its context or with an unknown cell '${state.cellKey}'`);
  return { cell, context };
}

/**
 * Runs `work` as a root run of its own. A graph invoked inside a node inherits the
 * node's run config through LangChain's async-local storage and becomes a subgraph of
 * this cell (its checkpoint namespace and thread included): the agent's own checkpointer
 * and resume would then read the cell's state instead of its own.
 */
function detached<T>(work: () => Promise<T>): Promise<T> {
  return AsyncLocalStorageProviderSingleton.getInstance().run(undefined, work);
}

async function generate(state: CellValues, config: CellConfig) {
  const { cell, context } = cellOf(state, config);
  return { produced: await detached(() => producePage(cell, context.resources)) };
}

async function evaluate(state: CellValues, config: CellConfig) {
  const { cell, context } = cellOf(state, config);
  const { outcome } = await evaluateOneTask(cell.task, { resultDir: cell.resultDir, model: cell.arm.name, pairing: context.pairing, candidateDir: cell.dir }, context.evaluator);
  return {
    evaluation: {
      status: outcome.status,
      ...(outcome.final !== undefined ? { final: outcome.final } : {}),
      ...(outcome.ifs !== undefined ? { ifs: outcome.ifs } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
      wallMs: outcome.wallMs,
    },
  };
}

async function scoreIterations(state: CellValues, config: CellConfig) {
  const { cell, context } = cellOf(state, config);
  const iterations = [];
  for (const draft of state.produced?.iterations ?? []) {
    const { outcome } = await evaluateOneTask(cell.task, { resultDir: cell.resultDir, model: `${cell.arm.name}#draft-${draft.draft}`, pairing: context.pairing, candidateDir: draft.dir }, context.evaluator);
    iterations.push({
      draft: draft.draft,
      round: draft.round,
      ...(draft.selfScore !== undefined ? { selfScore: draft.selfScore } : {}),
      ...(outcome.final !== undefined ? { final: outcome.final } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
    });
  }
  return { iterations };
}

/**
 * The self-check of the cell's page, as an agent would compute it: from the task's
 * inputs and, in this labelled track, the task's action descriptions (never its
 * checkpoints or assertions). Reported beside the evaluator's Final to show how well the
 * signal tracks it; it reaches no generator.
 */
async function selfCheck(state: CellValues, config: CellConfig) {
  const { cell, context } = cellOf(state, config);
  const started = Date.now();
  if (!context.selfCheck || state.produced?.status !== "made") return {};
  try {
    const record = await runSelfCheck({
      inputs: cell.task.inputs,
      actions: cell.task.line.action_sequence.map(replayActionOf),
      trajectory: "given",
      candidateDir: cell.dir,
      metric: context.selfCheck.metric,
      ...(context.evaluator.pageSlots ? { pageSlots: context.evaluator.pageSlots } : {}),
      ...(context.evaluator.pageMemoryMiB ? { memoryLimitMiB: context.evaluator.pageMemoryMiB } : {}),
      ...(context.selfCheck.statesCacheDir ? { statesCacheDir: context.selfCheck.statesCacheDir } : {}),
    });
    return { selfCheck: { selfScore: record.selfScore, wallMs: Date.now() - started } };
  } catch (error) {
    return { selfCheck: { error: toErrorRecord(error), wallMs: Date.now() - started } };
  }
}

const afterEvaluate = (state: CellValues, config: CellConfig) => {
  if ((state.produced?.iterations?.length ?? 0) > 0) return "score-iterations";
  return config.context?.selfCheck ? "self-check" : END;
};

export function buildCellGraph() {
  return new StateGraph(CellState, { context: CellContextSchema })
    .addNode("generate", generate)
    .addNode("evaluate", evaluate)
    .addNode("score-iterations", scoreIterations)
    .addNode("self-check", selfCheck)
    .addEdge(START, "generate")
    .addEdge("generate", "evaluate")
    .addConditionalEdges("evaluate", afterEvaluate, ["score-iterations", "self-check", END])
    .addConditionalEdges("score-iterations", (_state: CellValues, config: CellConfig) => (config.context?.selfCheck ? "self-check" : END), ["self-check", END])
    .addEdge("self-check", END)
    .compile({ name: "experiment-cell" });
}

export type CellGraph = ReturnType<typeof buildCellGraph>;
