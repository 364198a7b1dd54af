/**
 * post-process: the page inside the reply (see src/generation/page-from-reply.ts). Under corrected, a reply
 * with no HTML is not an exception here but a recorded failure, so the raw reply stays
 * in the result for whoever wants to see what the model said; under official it is
 * written as the page, as the harness does.
 */
import { IwrError, toErrorRecord } from "../../../src/errors.ts";
import { extractPageAsHarness, extractPageFromReply } from "../../../src/generation/page-from-reply.ts";
import { profileRules } from "../../../src/protocol.ts";
import { contextOf, type SinglePassConfig, type SinglePassUpdate, type SinglePassValues } from "../state.ts";

export async function postProcess(state: SinglePassValues, config: SinglePassConfig): Promise<SinglePassUpdate> {
  if (!state.reply || state.assetsBase === undefined) throw new IwrError("CONFIG_INVALID", "post-process ran without a reply or an assets path in state");
  // The official profile writes whatever the harness would: an empty or prose reply is still a page.
  if (profileRules(contextOf(config).protocol ?? "corrected").unusableReply === "write")
    return { html: extractPageAsHarness(state.reply.text, state.assetsBase) };
  try {
    return { html: extractPageFromReply(state.reply.text, state.assetsBase) };
  } catch (error) {
    if (error instanceof IwrError && error.code === "MODEL_REPLY") return { failure: toErrorRecord(error) };
    throw error;
  }
}
