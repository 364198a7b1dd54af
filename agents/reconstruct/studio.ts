/**
 * The agent's graph as LangGraph Studio loads it (langgraph.json; `npx @langchain/langgraph-cli
 * dev`). Studio's runs bring a task's inputs and settings as the graph's input but no
 * run-time context, so one is built here from the environment: the drafting model
 * IWR_AGENT_MODEL (a preset, a YAML file or a model id; default gpt-4o) at
 * OPENAI_BASE_URL, drafts under IWR_STUDIO_DIR (default .studio/). Studio swaps in its own
 * in-memory checkpointer.
 */
import path from "node:path";
import { createVisualMetric } from "../../src/evaluator/metrics/visual.ts";
import { createModelClient, loadModelSpec } from "../../src/models/index.ts";
import { buildReconstructionGraph } from "./graph.ts";
import { setAgentContextFallback, type AgentContext } from "./state.ts";

let context: Promise<AgentContext> | undefined;

setAgentContextFallback(() => {
  context ??= (async () => {
    const model = createModelClient(loadModelSpec(process.env.IWR_AGENT_MODEL ?? "gpt-4o", {}, { source: "IWR_AGENT_MODEL" }));
    return { drafter: model, critic: model, workDir: path.resolve(process.env.IWR_STUDIO_DIR ?? ".studio"), metric: await createVisualMetric(), host: {} };
  })();
  return context;
});

export const reconstruct = buildReconstructionGraph();
