/**
 * draft: one complete index.html under the single-pass output rules, from the storyboard,
 * the frames and the sheets (prompts/draft.md); with the analysis switched off, the
 * single-pass request itself (prompts/generate.md). One branch per Send; with breadth
 * k > 1 the k branches run in parallel, each a separate sample (the sample index is part
 * of the cache key) at the drafting temperature.
 */
import { toErrorRecord } from "../../../src/errors.ts";
import { ASSET_PLACEHOLDER } from "../../../src/tasks/inputs.ts";
import { DraftJobSchema } from "../jobs.ts";
import { callWithPrompt } from "../model-call.ts";
import { storePageFromReply, writeIterationPage } from "../pages.ts";
import { type AgentConfig, type AgentUpdate, agentContextOf, type Draft, failedDraft } from "../state.ts";
import { readStoredText } from "../store.ts";

export async function draft(input: unknown, config: AgentConfig): Promise<AgentUpdate> {
  const job = DraftJobSchema.parse(input);
  const context = await agentContextOf(config);
  const { inputs } = job;
  const common = {
    width: inputs.resolution.width,
    height: inputs.resolution.height,
    sheet_count: job.sheets.length,
    frame_count: job.frames.length,
    assets_placeholder: ASSET_PLACEHOLDER,
  };
  const prompt = job.storyboard ? "draft" : "generate";
  let reply: Awaited<ReturnType<typeof callWithPrompt>>;
  try {
    reply = await callWithPrompt(context.drafter, {
      prompt,
      variables: job.storyboard ? { ...common, storyboard: readStoredText(job.storyboard).trim() } : common,
      images: [...job.sheets.map((sheet) => sheet.path), ...job.frames.map((frame) => frame.path)],
      sample: job.branch,
      ...(config.signal ? { signal: config.signal } : {}),
    });
  } catch (error) {
    // A model that keeps failing loses this branch, not the run (a cancelled run stops here).
    if (config.signal?.aborted) throw error;
    return { drafts: [failedDraft(job, "draft", error)] };
  }
  const record: Draft = {
    id: job.id,
    round: job.round,
    branch: job.branch,
    origin: "draft",
    requestHashes: [reply.result.requestHash],
    usage: reply.usage,
    checked: false,
  };
  try {
    const page = storePageFromReply(context.workDir, reply.result.text);
    writeIterationPage(context.workDir, job.id, page, inputs.assetsDir);
    record.page = page;
  } catch (error) {
    record.error = toErrorRecord(error);
  }
  return { drafts: [record], usageByNode: { draft: reply.usage }, promptHashes: { [prompt]: reply.promptHash } };
}
