/**
 * One experiment cell (task × arm × repeat) as a graph:
 *
 *   START → generate → evaluate ─┬─→ END
 *                                └─→ score-iterations → END   (agent arms with saved drafts)
 *
 * `generate` is the arm's generator (single pass, the agent's own graph, a calibration
 * page, a researcher's module, or a page made elsewhere); `evaluate` is the fixed
 * evaluator, the same for every arm and unchanged; `score-iterations` scores each draft
 * an agent saved, for the score-by-iteration curve. Those scores are reported only: they
 * reach no generator, and the agent has finished before they exist.
 *
 * State holds the cell's identity and its outcomes (small records, no images); the
 * resources (task, evaluator, model clients) come in as LangGraph `context`.
 */
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { END, START, StateGraph, StateSchema, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { IwrError } from "../../src/errors.ts";
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

export const CellState = new StateSchema({
  /** Which cell: the key of the Cell in context.cells. */
  cellKey: z.string(),
  produced: CellOutcomeSchema.optional(),
  evaluation: CellEvaluationSchema.optional(),
  iterations: z.array(IterationScoreSchema).default(() => []),
});
export type CellValues = typeof CellState.State;

export interface CellContext {
  cells: ReadonlyMap<string, Cell>;
  resources: ArmResources;
  evaluator: Evaluator;
  pairing: PairingMode;
}
type CellConfig = LangGraphRunnableConfig<CellContext>;

const present = (value: unknown) => typeof value === "object" && value !== null;
const CellContextSchema = z.object({
  cells: z.custom<ReadonlyMap<string, Cell>>((value) => value instanceof Map, { message: "expected the run's cells (a Map)" }),
  resources: z.custom<ArmResources>(present, { message: "expected the arms' resources" }),
  evaluator: z.custom<Evaluator>(present, { message: "expected the evaluator (createEvaluator)" }),
  pairing: z.custom<PairingMode>((value) => typeof value === "string"),
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

export function buildCellGraph() {
  return new StateGraph(CellState, { context: CellContextSchema })
    .addNode("generate", generate)
    .addNode("evaluate", evaluate)
    .addNode("score-iterations", scoreIterations)
    .addEdge(START, "generate")
    .addEdge("generate", "evaluate")
    .addConditionalEdges("evaluate", (state: CellValues) => ((state.produced?.iterations?.length ?? 0) > 0 ? "score-iterations" : END), ["score-iterations", END])
    .addEdge("score-iterations", END)
    .compile({ name: "experiment-cell" });
}

export type CellGraph = ReturnType<typeof buildCellGraph>;
