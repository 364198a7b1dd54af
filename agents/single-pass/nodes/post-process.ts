/**
 * post-process: the page inside the reply (see html-reply.ts). A reply with no HTML is
 * not an exception here but a recorded failure, so the raw reply stays in the result
 * for whoever wants to see what the model said.
 */
import { IwrError, toErrorRecord } from "../../../src/errors.ts";
import { extractPageFromReply } from "../html-reply.ts";
import type { SinglePassUpdate, SinglePassValues } from "../state.ts";

export async function postProcess(state: SinglePassValues): Promise<SinglePassUpdate> {
  if (!state.reply || state.assetsBase === undefined) throw new IwrError("CONFIG_INVALID", "post-process ran without a reply or an assets path in state");
  try {
    return { html: extractPageFromReply(state.reply.text, state.assetsBase) };
  } catch (error) {
    if (error instanceof IwrError && error.code === "MODEL_REPLY") return { failure: toErrorRecord(error) };
    throw error;
  }
}
