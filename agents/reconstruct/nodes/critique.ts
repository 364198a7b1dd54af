/**
 * critique: one vision call with the worst-matching (video frame, replay screenshot)
 * pairs of the best draft and its findings → a zod-validated list of defects, each with
 * the change to make. Only those pairs are sent (not the whole video again): a round
 * costs a few images. A reply that is not a defect list is recorded, and the revision
 * goes on from the findings alone. Returns a Command to the revise branches.
 */
import fs from "node:fs";
import path from "node:path";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { errorMessage, toErrorRecord } from "../../../src/errors.ts";
import { log } from "../../../src/log/logger.ts";
import { agentFiles } from "../../../src/results/layout.ts";
import type { SelfCheckRecord } from "../../../src/selfcheck/self-check.ts";
import { findingsOf, findingsText, selfCheckRecordOf } from "../findings.ts";
import { reviseSends } from "../jobs.ts";
import { parseJsonReply } from "../json-reply.ts";
import { callWithPrompt } from "../model-call.ts";
import { type AgentConfig, type AgentValues, agentContextOf } from "../state.ts";
import { readStoredText, storeFile } from "../store.ts";

const PROMPT = "critique";

export const DefectsSchema = z.object({
  defects: z.array(z.object({ where: z.string().default(""), problem: z.string().trim().min(1), change: z.string().trim().min(1) })),
});
export type Defects = z.infer<typeof DefectsSchema>;

export interface ComparisonPair {
  videoFrame: string;
  screenshot: string;
  caption: string;
}

/**
 * The pairs worth showing: those the costliest findings name first, then the screenshots
 * least like their video state; one pair per screenshot.
 */
export function worstPairs(record: SelfCheckRecord, recordDir: string, limit: number): ComparisonPair[] {
  const pairs: ComparisonPair[] = [];
  const seen = new Set<string>();
  const add = (screenshot: string | undefined, videoFrame: string | undefined, caption: string) => {
    if (!screenshot || !videoFrame || pairs.length >= limit) return;
    const file = path.resolve(recordDir, screenshot);
    if (seen.has(file) || !fs.existsSync(file) || !fs.existsSync(videoFrame)) return;
    seen.add(file);
    pairs.push({ videoFrame, screenshot: file, caption });
  };
  for (const finding of record.findings) add(finding.screenshot, finding.videoFrame, finding.message);
  const stateFrame = (state: number | undefined) => (state === undefined ? undefined : record.video.states[state]?.framePath);
  const bySimilarity = record.steps
    .map((step, index) => ({ step, index }))
    .filter(({ step }) => step.similarity !== undefined)
    .sort((a, b) => (a.step.similarity?.combined ?? 1) - (b.step.similarity?.combined ?? 1));
  for (const { step, index } of bySimilarity)
    add(record.page.screenshots[index + 1], stateFrame(step.state), `after action ${index + 1}: similarity ${step.similarity?.combined.toFixed(2)}`);
  if (record.initial)
    add(record.page.screenshots[0], stateFrame(record.initial.state), `before any action: similarity ${record.initial.similarity.combined.toFixed(2)}`);
  return pairs;
}

export function defectsText(defects: Defects["defects"]): string {
  return defects.map((defect, index) => `${index + 1}. ${defect.where ? `${defect.where}: ` : ""}${defect.problem} — change: ${defect.change}`).join("\n");
}

export async function critique(state: AgentValues, config: AgentConfig): Promise<Command> {
  const context = await agentContextOf(config);
  const best = state.drafts.find((draft) => draft.id === state.bestDraftId)!;
  const recordDir = agentFiles(context.workDir).iteration(best.id);
  const record = selfCheckRecordOf(context.workDir, best.id);
  const findings = findingsOf(context.workDir, best.id);
  const pairs = record ? worstPairs(record, recordDir, state.settings.critiquePairs) : [];
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
      images: pairs.flatMap((pair) => [pair.videoFrame, pair.screenshot]),
      ...(config.signal ? { signal: config.signal } : {}),
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
