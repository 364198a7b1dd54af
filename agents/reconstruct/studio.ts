/**
 * The agent's graph as LangGraph Studio loads it (langgraph.json; `npx @langchain/langgraph-cli
 * dev`, checked by test/agent/studio.long.test.ts). Studio's runs bring a task's inputs
 * and settings as the graph's input, and as context at most the model names `model` and
 * `criticModel` (AgentContextSchema), so the run-time parts are built here:
 * the drafting model is the context's `model`, else IWR_AGENT_MODEL, else gpt-4o (a
 * preset, a YAML file or a model id at OPENAI_BASE_URL); each thread's drafts go under
 * IWR_STUDIO_DIR (default .studio/)/<thread id>, so two threads never share an
 * iterations folder. Studio swaps in its own in-memory checkpointer.
 */
// First: workers started by anything imported after it must not inherit the dev server's preload.
import "./studio-workers.ts";
import path from "node:path";
import { safeFolderName } from "../../src/files/safe-name.ts";
import { createVisualMetric, type VisualMetric } from "../../src/metrics/visual.ts";
import { createModelClient, loadModelSpec, type ModelClient } from "../../src/models/index.ts";
import { buildReconstructionGraph } from "./graph.ts";
import { selfCheckFeedback } from "./self-check-feedback.ts";
import { type StudioContext, setAgentContextFallback } from "./state.ts";

const clients = new Map<string, ModelClient>();
let metric: Promise<VisualMetric> | undefined;

/** One client per model name, kept for the server's life (each holds its own connection pool and cache). */
function clientFor(model: string, source: string): ModelClient {
  let client = clients.get(model);
  if (!client) {
    client = createModelClient(loadModelSpec(model, {}, { source }));
    clients.set(model, client);
  }
  return client;
}

setAgentContextFallback(async (studio: StudioContext, config) => {
  const drafterName = studio.model ?? process.env.IWR_AGENT_MODEL ?? "gpt-4o";
  const drafter = clientFor(drafterName, studio.model ? "context.model" : "IWR_AGENT_MODEL");
  const critic = studio.criticModel ? clientFor(studio.criticModel, "context.criticModel") : drafter;
  const thread = String((config.configurable as Record<string, unknown> | undefined)?.thread_id ?? "default");
  const workDir = path.resolve(process.env.IWR_STUDIO_DIR ?? ".studio", safeFolderName(thread, "the run's thread_id"));
  if (!metric) {
    const starting = createVisualMetric();
    metric = starting;
    // A failed start is not kept: the next run tries again.
    starting.catch(() => {
      if (metric === starting) metric = undefined;
    });
  }
  return { drafter, critic, workDir, feedback: selfCheckFeedback({ metric: await metric }) };
});

export const reconstruct = buildReconstructionGraph();
