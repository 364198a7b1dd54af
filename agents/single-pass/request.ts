/**
 * The one user message of a single-pass request: the prompt text, then every image as
 * a data URL, sheets before frames (docs/protocol.md §2). Shared by the call-model node
 * and by `singlePassRequestHash`, so the hash a run checks is the hash it would send.
 */
import type { HumanMessage } from "@langchain/core/messages";
import { IwrError } from "../../src/errors.ts";
import { userMessage } from "../../src/models/message.ts";
import type { SinglePassValues } from "./state.ts";

export function singlePassMessage(state: Pick<SinglePassValues, "prompt" | "images">): HumanMessage {
  if (!state.prompt) throw new IwrError("CONFIG_INVALID", "the single-pass request was built before prepare-inputs: no prompt in state");
  return userMessage(
    state.prompt.text,
    state.images.map((image) => ({ file: image.path })),
  );
}
