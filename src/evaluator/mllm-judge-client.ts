/**
 * Wires the MLLM visual judge to src/models: one user message holding the prompt text
 * and then every image as a PNG data URL (reference first, as the harness sends them).
 * Sampling (temperature 0), retries, caching and cost tracking are the client's.
 */

import type { ModelClient } from "../models/index.ts";
import { userMessage } from "../models/message.ts";
import { createModelJudge, type JudgeCall, type MllmJudge } from "./mllm-judge.ts";

export function judgeCallFromClient(client: ModelClient): JudgeCall {
  return async (prompt, images) => {
    const result = await client.invoke([userMessage(prompt, images)]);
    return result.text;
  };
}

/** The visual judge backed by a model client (its spec's name is recorded as the judge model). */
export function createClientJudge(client: ModelClient, options: { promptsDir?: string; promptName?: string } = {}): MllmJudge {
  return createModelJudge({ call: judgeCallFromClient(client), modelName: client.spec.name, ...options });
}
