/**
 * The single-pass generator (docs/protocol.md §2) as a graph. Wiring only:
 *
 *   START → prepare-inputs → call-model → post-process → END
 */
import { END, START, StateGraph } from "@langchain/langgraph";
import { callModel } from "./nodes/call-model.ts";
import { postProcess } from "./nodes/post-process.ts";
import { prepareInputs } from "./nodes/prepare-inputs.ts";
import { SinglePassContextSchema, SinglePassInput, SinglePassState } from "./state.ts";

export function buildSinglePassGraph() {
  return new StateGraph(SinglePassState, { input: SinglePassInput, context: SinglePassContextSchema })
    .addNode("prepare-inputs", prepareInputs)
    .addNode("call-model", callModel)
    .addNode("post-process", postProcess)
    .addEdge(START, "prepare-inputs")
    .addEdge("prepare-inputs", "call-model")
    .addEdge("call-model", "post-process")
    .addEdge("post-process", END)
    .compile({ name: "single-pass" });
}

export type SinglePassGraph = ReturnType<typeof buildSinglePassGraph>;
