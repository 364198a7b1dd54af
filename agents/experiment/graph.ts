/**
 * One experiment cell (task × arm × repeat) as a graph. Wiring only:
 *
 *                       ┌─→ evaluate ───────────────────────────────┐
 *   START → generate ───┼─→ score-iterations (agent arms' drafts) ──┼─→ END
 *                       └─→ self-check (when asked) ────────────────┘
 *
 * The three after generate read the page and write records of their own (eval.json, the
 * drafts' eval.json, selfcheck.json), so they run side by side: a cell's chain is its
 * longest branch, not their sum. The evaluator's page slots bound how many pages replay at
 * once, across cells and branches alike.
 */
import { END, START, StateGraph } from "@langchain/langgraph";
import { evaluate } from "./nodes/evaluate.ts";
import { generate } from "./nodes/generate.ts";
import { scoreIterations } from "./nodes/score-iterations.ts";
import { selfCheck } from "./nodes/self-check.ts";
import { type CellConfig, CellContextSchema, CellState, type CellValues } from "./state.ts";

type AfterGenerate = "evaluate" | "score-iterations" | "self-check";

function afterGenerate(state: CellValues, config: CellConfig): AfterGenerate[] {
  const next: AfterGenerate[] = ["evaluate"];
  if ((state.produced?.iterations?.length ?? 0) > 0) next.push("score-iterations");
  if (config.context?.work.selfCheck) next.push("self-check");
  return next;
}

export function buildCellGraph() {
  return new StateGraph(CellState, { context: CellContextSchema })
    .addNode("generate", generate)
    .addNode("evaluate", evaluate)
    .addNode("score-iterations", scoreIterations)
    .addNode("self-check", selfCheck)
    .addEdge(START, "generate")
    .addConditionalEdges("generate", afterGenerate, ["evaluate", "score-iterations", "self-check"])
    .addEdge("evaluate", END)
    .addEdge("score-iterations", END)
    .addEdge("self-check", END)
    .compile({ name: "experiment-cell" });
}

export type { CellValues, CellWork } from "./state.ts";
