/**
 * call-model: one user message — the prompt text, then every image as a data URL,
 * sheets before frames — sent through the model client (cache, retries, usage).
 * Temperature and the output budget come from the model's spec (0 and 16384 by default).
 */
import { HumanMessage } from "@langchain/core/messages";
import { IwrError } from "../../../src/errors.ts";
import { contextOf, type SinglePassConfig, type SinglePassUpdate, type SinglePassValues } from "../state.ts";

export async function callModel(state: SinglePassValues, config: SinglePassConfig): Promise<SinglePassUpdate> {
  const { model } = contextOf(config);
  if (!state.prompt) throw new IwrError("CONFIG_INVALID", "call-model ran before prepare-inputs: no prompt in state");
  const message = new HumanMessage({
    content: [
      { type: "text", text: state.prompt.text },
      ...state.images.map((image) => ({ type: "image_url" as const, image_url: { url: image.dataUrl } })),
    ],
  });
  const result = await model.invoke([message], config.signal ? { signal: config.signal } : {});
  return {
    reply: {
      text: result.text,
      usage: result.usage,
      costUsd: result.costUsd,
      latencyMs: result.latencyMs,
      cacheHit: result.cacheHit,
      requestHash: result.requestHash,
    },
  };
}
