/**
 * The reconstruction agent as a graph. Wiring only:
 *
 *   START → prepare ─┬─ analyze ─┬→ draft ×k ─→ self-check → select ─┬→ END
 *                    └───────────┘                  ↑                ├→ critique → revise ×k ─┐
 *                                                   │                └→ revise ×k (no critique)┤
 *                                                   └──────────────────────────────────────────┘
 *
 * `×k` are parallel branches (Send), one per draft of the breadth. select and critique
 * route by returning a Command; their possible targets are declared (`ends`).
 */

import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, START, StateGraph } from "@langchain/langgraph";
import { draftSends } from "./jobs.ts";
import { analyze } from "./nodes/analyze.ts";
import { critique } from "./nodes/critique.ts";
import { draft } from "./nodes/draft.ts";
import { prepare } from "./nodes/prepare.ts";
import { revise } from "./nodes/revise.ts";
import { select } from "./nodes/select.ts";
import { selfCheck } from "./nodes/self-check.ts";
import { AgentContextSchema, AgentInput, AgentState, type AgentValues } from "./state.ts";

export const GRAPH_NAME = "reconstruct";

export function buildReconstructionGraph(options: { checkpointer?: BaseCheckpointSaver } = {}) {
  return new StateGraph(AgentState, { input: AgentInput, context: AgentContextSchema })
    .addNode("prepare", prepare)
    .addNode("analyze", analyze)
    .addNode("draft", draft)
    .addNode("self-check", selfCheck)
    .addNode("select", select, { ends: ["critique", "revise", END] })
    .addNode("critique", critique, { ends: ["revise"] })
    .addNode("revise", revise)
    .addEdge(START, "prepare")
    .addConditionalEdges("prepare", (state: AgentValues) => (state.settings.analyze ? "analyze" : draftSends(state)), ["analyze", "draft"])
    .addConditionalEdges("analyze", (state: AgentValues) => draftSends(state), ["draft"])
    .addEdge("draft", "self-check")
    .addEdge("revise", "self-check")
    .addEdge("self-check", "select")
    .compile({ name: GRAPH_NAME, ...(options.checkpointer ? { checkpointer: options.checkpointer } : {}) });
}

export type ReconstructionGraph = ReturnType<typeof buildReconstructionGraph>;

/** The compiled graph drawn as text: nodes and edges (for notes and `iwr agent --graph`). */
export async function graphAsText(graph: ReconstructionGraph = buildReconstructionGraph()): Promise<string> {
  const drawable = await graph.getGraphAsync();
  const nodes = Object.keys(drawable.nodes).join(", ");
  const edges = drawable.edges.map((edge) => `${edge.source} ${edge.conditional ? "-?->" : "-->"} ${edge.target}`).join("\n");
  return `nodes: ${nodes}\n${edges}`;
}
