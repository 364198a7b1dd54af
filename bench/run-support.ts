/**
 * What bench:run and bench:rerun share: the demo experiment with its model arms pointed at
 * a local OpenAI-compatible server (the test fixture) that answers every request after a
 * fixed latency, and the CPU time of this process's main thread.
 */

import { type ExperimentConfig, loadExperimentConfig } from "../src/experiment/config.ts";
import { replayActionOf } from "../src/replay/replay.ts";
import { loadTasks } from "../src/tasks/loader.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, scriptlessPageReply, storyboardReply, truePageReply } from "../test/support/agent-scripts.ts";
import { type FakeOpenAIServer, type ScriptedReply, startOpenAIServer } from "../test/support/openai-server.ts";
import { statCpuSec } from "./process-tree-cpu.ts";

export const DEMO = "configs/demo.yaml";

/** A server whose every answer arrives after `latencyMs`: the agent's script for the first task's pages. */
export async function latencyServer(taskFile: string, taskId: number, latencyMs: number): Promise<FakeOpenAIServer> {
  const task = (await loadTasks(taskFile)).find((entry) => entry.id === taskId)!;
  const script = scriptedAgentModel({
    generate: [scriptlessPageReply(task)],
    analyze: [storyboardReply(task.line.action_sequence.map(replayActionOf))],
    draft: [scriptlessPageReply(task)],
    critique: [CRITIQUE_REPLY],
    revise: [truePageReply(task)],
  });
  const server = await startOpenAIServer({ models: ["gpt-4o"] });
  server.setReplyFunction(async (request) => {
    const reply: ScriptedReply = await script.reply(request);
    return typeof reply === "string" ? { text: reply, delayMs: latencyMs } : reply;
  });
  return server;
}

/** The demo config with its model arms on `baseURL`, restricted to `ids`, into `out`. */
export function demoConfig(baseURL: string, out: string, ids: number[] | undefined): ExperimentConfig {
  return loadExperimentConfig(DEMO, { env: { ...process.env, IWR_MODEL: "gpt-4o", IWR_BASE_URL: baseURL }, out, ...(ids ? { ids } : {}) });
}

/** CPU seconds of this process's main thread alone: the JavaScript that no other thread can take over. */
export function mainThreadCpuSec(): number {
  return statCpuSec(`/proc/self/task/${process.pid}/stat`);
}
