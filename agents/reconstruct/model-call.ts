/**
 * One model call of a node: a prompt from prompts/ and images read from the store, sent
 * as one user message through the model layer (cache, retries, usage). Images are read
 * from disk only here, at send time, and never enter state.
 */
import type { HumanMessage } from "@langchain/core/messages";
import { type ModelCallResult, type ModelClient, type Usage, usageOfCall } from "../../src/models/index.ts";
import { userMessage } from "../../src/models/message.ts";
import { loadPrompt, type PromptVariables, renderPrompt } from "../../src/prompts/template.ts";
import { agentText } from "./agent-files.ts";

export interface PromptedCall {
  prompt: string;
  variables: PromptVariables;
  /** PNG files, in the order the prompt describes them. */
  images: readonly string[];
  /** Sample index of a request sent several times on purpose (breadth). */
  sample?: number;
  signal?: AbortSignal;
  /** Whether a reply is an answer (the reason it is not): one that is not is never cached. */
  accept?: (text: string) => string | undefined;
}

export interface PromptedReply {
  result: ModelCallResult;
  promptHash: string;
  usage: Usage;
}

export function promptedMessage(call: Pick<PromptedCall, "prompt" | "variables" | "images">): { message: HumanMessage; promptHash: string } {
  const rendered = renderPrompt(loadPrompt(call.prompt), call.variables);
  const message = userMessage(
    rendered.text,
    call.images.map((file) => ({ file })),
  );
  return { message, promptHash: rendered.hash };
}

export async function callWithPrompt(model: ModelClient, call: PromptedCall): Promise<PromptedReply> {
  const { message, promptHash } = promptedMessage(call);
  const answered = await model.invoke([message], {
    ...(call.signal ? { signal: call.signal } : {}),
    ...(call.sample ? { sample: call.sample } : {}),
    ...(call.accept ? { accept: call.accept } : {}),
  });
  // A reply enters the agent with secrets masked: what state derives from it (a storyboard's
  // actions, an error quoting it) goes into checkpoints and self-check records, not only the store.
  const result = { ...answered, text: agentText(answered.text) };
  return { result, promptHash, usage: usageOfCall(result, call.images.length) };
}
