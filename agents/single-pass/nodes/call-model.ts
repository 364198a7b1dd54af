/**
 * call-model: one user message — the prompt text, then every image as a data URL,
 * sheets before frames — sent through the model client (cache, retries, usage).
 * Temperature and the output budget come from the model's spec (0 and 16384 by default).
 */
import { profileRules } from "../../../src/protocol.ts";
import { singlePassMessage } from "../request.ts";
import { contextOf, type SinglePassConfig, type SinglePassUpdate, type SinglePassValues } from "../state.ts";

export async function callModel(state: SinglePassValues, config: SinglePassConfig): Promise<SinglePassUpdate> {
  const { model, sample, protocol } = contextOf(config);
  const message = singlePassMessage(state);
  const rules = profileRules(protocol ?? "corrected");
  const result = await model.invoke([message], {
    ...(config.signal ? { signal: config.signal } : {}),
    ...(sample ? { sample } : {}),
    // The harness sends every sheet past the cap, and writes an empty reply as an empty page.
    ...(rules.sheetsOverCap === "sheets-only" ? { allowOverImageCap: true } : {}),
    ...(rules.unusableReply === "write" ? { allowEmptyReply: true } : {}),
  });
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
