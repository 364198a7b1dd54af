/**
 * critique: one vision call with the worst-matching (video frame, replay screenshot)
 * pairs of the best draft and its findings (its feedback.json) → a zod-validated list of defects, each with
 * the change to make. Only those pairs are sent (not the whole video again): a round
 * costs a few images. A reply that is not a defect list is recorded, and the revision
 * goes on from the findings alone. Returns a Command to the revise branches.
 */
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { errorMessage, toErrorRecord } from "../../../src/errors.ts";
import { log } from "../../../src/log/logger.ts";
import { feedbackOf, findingsText } from "../feedback.ts";
import { reviseSends } from "../jobs.ts";
import { jsonReplyProblem, parseJsonReply } from "../json-reply.ts";
import { callWithPrompt } from "../model-call.ts";
import { type AgentConfig, type AgentValues, agentContextOf } from "../state.ts";
import { readStoredText, storeFile } from "../store.ts";

const PROMPT = "critique";

export const DefectsSchema = z.object({
  defects: z.array(z.object({ where: z.string().default(""), problem: z.string().trim().min(1), change: z.string().trim().min(1) })),
});
export type Defects = z.infer<typeof DefectsSchema>;

export function defectsText(defects: Defects["defects"]): string {
  return defects.map((defect, index) => `${index + 1}. ${defect.where ? `${defect.where}: ` : ""}${defect.problem} — change: ${defect.change}`).join("\n");
}

export async function critique(state: AgentValues, config: AgentConfig): Promise<Command> {
  const context = await agentContextOf(config);
  const best = state.drafts.find((draft) => draft.id === state.bestDraftId)!;
  const feedback = feedbackOf(context.workDir, best.id);
  const findings = feedback?.findings ?? [];
  const pairs = (feedback?.pairs ?? []).slice(0, state.settings.critiquePairs);
  const round = state.round + 1;
  let problemsText = findingsText(findings);
  let critiqueRecord: AgentValues["latestCritique"] = { round, defectCount: 0, pairs: pairs.length };
  let usageUpdate = {};
  let promptUpdate = {};
  try {
    const reply = await callWithPrompt(context.critic, {
      prompt: PROMPT,
      variables: {
        width: state.inputs.resolution.width,
        height: state.inputs.resolution.height,
        pair_count: pairs.length,
        pairs: pairs.length === 0 ? "- (none: the page could not be compared)" : pairs.map((pair, index) => `- pair ${index + 1}: ${pair.caption}`).join("\n"),
        findings: findingsText(findings),
        storyboard: state.analysis?.storyboard ? readStoredText(state.analysis.storyboard).trim() : "{}",
      },
      images: pairs.flatMap((pair) => [pair.reference, pair.screenshot]),
      ...(config.signal ? { signal: config.signal } : {}),
      accept: (text) => jsonReplyProblem(text, DefectsSchema, PROMPT),
    });
    usageUpdate = { critique: reply.usage };
    promptUpdate = { [PROMPT]: reply.promptHash };
    try {
      const { defects } = parseJsonReply(reply.result.text, DefectsSchema, "critique");
      const stored = storeFile(context.workDir, `${JSON.stringify({ defects }, null, 2)}\n`, "json");
      critiqueRecord = { ...critiqueRecord, defects: stored, defectCount: defects.length };
      if (defects.length > 0) problemsText = `${defectsText(defects)}\n\nThe automatic check also found:\n${findingsText(findings)}`;
    } catch (error) {
      storeFile(context.workDir, reply.result.text, "txt");
      throw error;
    }
  } catch (error) {
    if (config.signal?.aborted) throw error;
    log("agent").warn(`task ${state.inputs.id}: critique: ${errorMessage(error)}; revising from the findings alone`);
    critiqueRecord = { ...critiqueRecord, error: toErrorRecord(error) };
  }
  const problems = storeFile(context.workDir, `${problemsText}\n`, "md");
  return new Command({
    update: { latestCritique: critiqueRecord, usageByNode: usageUpdate, promptHashes: promptUpdate },
    goto: reviseSends(state, problems),
  });
}
