/**
 * revise: one new draft from the best one and what to fix (the critique's defects, or
 * the findings alone): a complete page (prompts/revise.md), or search/replace edits
 * (prompts/revise-edits.md) applied and checked, with a complete page asked for when an
 * edit does not apply. One branch per Send; breadth k gives k samples.
 */
import { toErrorRecord } from "../../../src/errors.ts";
import { extractPageFromReply } from "../../../src/generation/page-from-reply.ts";
import { addUsage, NO_USAGE } from "../../../src/models/index.ts";
import { ASSET_PLACEHOLDER } from "../../../src/tasks/inputs.ts";
import { applyEdits, parseEdits } from "../edits.ts";
import { type DraftJob, DraftJobSchema } from "../jobs.ts";
import { callWithPrompt, type PromptedReply } from "../model-call.ts";
import { storePage, storePageFromReply, writeIterationPage } from "../pages.ts";
import { type AgentConfig, type AgentContext, type AgentUpdate, agentContextOf, type Draft, failedDraft } from "../state.ts";
import { readStoredText } from "../store.ts";

function ask(
  context: AgentContext,
  job: DraftJob,
  prompt: "revise" | "revise-edits",
  page: string,
  defects: string,
  signal: AbortSignal | undefined,
): Promise<PromptedReply> {
  return callWithPrompt(context.drafter, {
    prompt,
    variables: {
      width: job.inputs.resolution.width,
      height: job.inputs.resolution.height,
      page: page.trim(),
      defects: defects.trim(),
      assets_placeholder: ASSET_PLACEHOLDER,
    },
    images: [],
    sample: job.branch,
    ...(signal ? { signal } : {}),
  });
}

export async function revise(input: unknown, config: AgentConfig): Promise<AgentUpdate> {
  const job = DraftJobSchema.parse(input);
  const context = await agentContextOf(config);
  const parentPage = job.parentPage ? readStoredText(job.parentPage) : "";
  const defects = job.problems ? readStoredText(job.problems) : "- (none listed: make the page closer to the recording)";
  const replies: PromptedReply[] = [];
  const base = { id: job.id, round: job.round, branch: job.branch, ...(job.parent !== undefined ? { parent: job.parent } : {}) };
  const finish = (record: Omit<Draft, keyof typeof base | "requestHashes" | "usage" | "checked">): AgentUpdate => {
    const usage = replies.reduce((sum, reply) => addUsage(sum, reply.usage), NO_USAGE);
    return {
      drafts: [{ ...base, ...record, requestHashes: replies.map((reply) => reply.result.requestHash), usage, checked: false }],
      usageByNode: { revise: usage },
      promptHashes: Object.fromEntries(
        replies.map((reply, index) => [index === 0 && job.settings.revise === "edits" ? "revise-edits" : "revise", reply.promptHash]),
      ),
    };
  };
  try {
    if (job.settings.revise === "edits") {
      const reply = await ask(context, job, "revise-edits", parentPage, defects, config.signal);
      replies.push(reply);
      const outcome = applyEdits(parentPage, parseEdits(reply.result.text));
      const edits = { proposed: outcome.proposed, applied: outcome.applied, failed: outcome.failed };
      if (outcome.page !== undefined) {
        // The edited page must still be a page (the same check a complete reply passes).
        const page = storePage(context.workDir, extractPageFromReply(`\`\`\`html\n${outcome.page}\n\`\`\``, ASSET_PLACEHOLDER));
        writeIterationPage(context.workDir, job.id, page, job.inputs.assetsDir);
        return finish({ origin: "revise-edits", page, edits });
      }
      const fallback = await ask(context, job, "revise", parentPage, defects, config.signal);
      replies.push(fallback);
      const page = storePageFromReply(context.workDir, fallback.result.text);
      writeIterationPage(context.workDir, job.id, page, job.inputs.assetsDir);
      return finish({ origin: "revise-edits-fallback", page, edits });
    }
    const reply = await ask(context, job, "revise", parentPage, defects, config.signal);
    replies.push(reply);
    const page = storePageFromReply(context.workDir, reply.result.text);
    writeIterationPage(context.workDir, job.id, page, job.inputs.assetsDir);
    return finish({ origin: "revise", page });
  } catch (error) {
    if (config.signal?.aborted) throw error;
    if (replies.length === 0) return { drafts: [failedDraft(job, job.settings.revise === "edits" ? "revise-edits" : "revise", error)] };
    return finish({ origin: job.settings.revise === "edits" ? "revise-edits-fallback" : "revise", error: toErrorRecord(error) });
  }
}
