/**
 * One experiment cell (task × arm × repeat) as a graph. Wiring only:
 *
 *   START → generate → evaluate ─┬───────────────────────────┬─→ self-check → END   (when asked)
 *                                ├─→ score-iterations ────────┤
 *                                │   (agent arms' saved drafts)└─→ END
 *                                └─→ END
 */
import { END, START, StateGraph } from "@langchain/langgraph";
import { evaluate } from "./nodes/evaluate.ts";
import { generate } from "./nodes/generate.ts";
import { scoreIterations } from "./nodes/score-iterations.ts";
import { selfCheck } from "./nodes/self-check.ts";
import { CellContextSchema, CellState, type CellConfig, type CellValues } from "./state.ts";

const selfCheckOrEnd = (config: CellConfig): "self-check" | typeof END => (config.context?.work.selfCheck ? "self-check" : END);

function afterEvaluate(state: CellValues, config: CellConfig): "score-iterations" | "self-check" | typeof END {
  return (state.produced?.iterations?.length ?? 0) > 0 ? "score-iterations" : selfCheckOrEnd(config);
}

export function buildCellGraph() {
  return new StateGraph(CellState, { context: CellContextSchema })
    .addNode("generate", generate)
    .addNode("evaluate", evaluate)
    .addNode("score-iterations", scoreIterations)
    .addNode("self-check", selfCheck)
    .addEdge(START, "generate")
    .addEdge("generate", "evaluate")
    .addConditionalEdges("evaluate", afterEvaluate, ["score-iterations", "self-check", END])
    .addConditionalEdges("score-iterations", (_state: CellValues, config: CellConfig) => selfCheckOrEnd(config), ["self-check", END])
    .addEdge("self-check", END)
    .compile({ name: "experiment-cell" });
}

export type CellGraph = ReturnType<typeof buildCellGraph>;
export type { CellValues, CellWork } from "./state.ts";
