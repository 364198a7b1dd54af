/**
 * State and context of the experiment cell graph. State holds the cell's key and its
 * outcomes (small records from src/results/cell-record.ts, no images). The work itself
 * comes in as LangGraph `context`: the application layer (src/experiment) hands the
 * graph the arm's generator, the fixed evaluator and the self-check as functions of the
 * cell, so the graph is wiring and the rooms keep their direction.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { IwrError } from "../../src/errors.ts";
import {
  type CellEvaluation,
  CellEvaluationSchema,
  type CellOutcome,
  CellOutcomeSchema,
  type CellSelfCheck,
  CellSelfCheckSchema,
  IterationScoreSchema,
} from "../../src/results/cell-record.ts";

export const CellState = new StateSchema({
  /** Which cell (its key in the run). */
  cellKey: z.string(),
  produced: CellOutcomeSchema.optional(),
  evaluation: CellEvaluationSchema.optional(),
  iterations: z.array(IterationScoreSchema).default(() => []),
  selfCheck: CellSelfCheckSchema.optional(),
});
export type CellValues = typeof CellState.State;
export type CellUpdate = typeof CellState.Update;

/** The work of one cell, by its key. */
export interface CellWork {
  /** The arm's generator: writes the cell's page and says what it cost. Never throws: a failure is its outcome. */
  generate(cellKey: string): Promise<CellOutcome>;
  /** The fixed evaluator on the cell's page, or on one of an agent's saved drafts. */
  evaluate(cellKey: string, draft?: { draft: number; dir: string }): Promise<CellEvaluation>;
  /** The self-check of the cell's page; absent when the experiment does not ask for it. */
  selfCheck?: (cellKey: string) => Promise<CellSelfCheck>;
}

const isWork = (value: unknown): value is CellWork =>
  typeof value === "object" && value !== null && typeof (value as CellWork).generate === "function" && typeof (value as CellWork).evaluate === "function";

export const CellContextSchema = z.object({
  work: z.custom<CellWork>(isWork, { message: "expected the cell's work ({ generate, evaluate, selfCheck? })" }),
});
export type CellContext = z.infer<typeof CellContextSchema>;
export type CellConfig = LangGraphRunnableConfig<CellContext>;

export function workOf(config: CellConfig): CellWork {
  const work = config.context?.work;
  if (!work) throw new IwrError("CONFIG_INVALID", "experiment cell graph invoked without its context ({ work })");
  return work;
}
