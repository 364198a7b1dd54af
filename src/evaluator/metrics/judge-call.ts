/**
 * Wires the MLLM visual judge to src/models: one user message holding the prompt text
 * and then every image as a PNG data URL (reference first, as the harness sends them).
 * Sampling (temperature 0), retries, caching and cost tracking are the client's.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { ModelClient } from "../../models/index.ts";
import { createModelJudge, type JudgeCall, type MllmJudge } from "./mllm.ts";

export function judgeCallFromClient(client: ModelClient): JudgeCall {
  return async (prompt, images) => {
    const message = new HumanMessage({
      content: [
        { type: "text", text: prompt },
        ...images.map((png) => ({ type: "image_url" as const, image_url: { url: `data:image/png;base64,${png.toString("base64")}` } })),
      ],
    });
    const result = await client.invoke([message]);
    return result.text;
  };
}

/** The visual judge backed by a model client (its spec's name is recorded as the judge model). */
export function createClientJudge(client: ModelClient, options: { promptsDir?: string; promptName?: string } = {}): MllmJudge {
  return createModelJudge({ call: judgeCallFromClient(client), modelName: client.spec.name, ...options });
}
