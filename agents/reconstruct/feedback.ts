/**
 * What the agent learns about a draft, and from whom. The graph's self-check node asks its
 * context's `feedback` provider for it and keeps it beside the draft (feedback.json); select
 * ranks drafts by its score, critique shows its pairs to the critic, and revise works from
 * its findings.
 *
 * The provider is a run-time part (LangGraph context), not graph code: normally the self-check
 * (self-check-feedback.ts: the draft replayed and compared with the video, from the task's
 * inputs only); in a labelled ablation, something else. The graph never learns which.
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { ReplayAction } from "../../src/replay/replay.ts";
import { agentWorkFiles, RESULT_FILES } from "../../src/results/layout.ts";
import type { TaskInputs } from "../../src/tasks/inputs.ts";
import { writeAgentFile } from "./agent-files.ts";
import type { AgentSettings } from "./settings.ts";

/** One thing wrong with a draft, ranked by what fixing it would win back at most. */
export const FeedbackFindingSchema = z.object({
  kind: z.string(),
  cost: z.number(),
  message: z.string(),
  /** 0-based action index, when it is about a step. */
  step: z.number().int().nonnegative().optional(),
});
export type FeedbackFinding = z.infer<typeof FeedbackFindingSchema>;

/** A picture of how it should look beside one of how the draft looks, with what the pair shows. */
export const ComparisonPairSchema = z.object({ reference: z.string(), screenshot: z.string(), caption: z.string() });
export type ComparisonPair = z.infer<typeof ComparisonPairSchema>;

export const DraftFeedbackSchema = z.object({
  /** 0–1: how the draft does by this provider's measure; drafts are ranked by it. */
  score: z.number().min(0).max(1),
  /** Its two parts, when the provider has them. */
  behaviour: z.number().optional(),
  appearance: z.number().optional(),
  /** Costliest first. */
  findings: z.array(FeedbackFindingSchema),
  /** Most telling first; files are absolute paths. */
  pairs: z.array(ComparisonPairSchema),
});
export type DraftFeedback = z.infer<typeof DraftFeedbackSchema>;

export interface FeedbackRequest {
  inputs: TaskInputs;
  /** The actions to replay: the inferred ones, the given ones in that track, none with replay off. */
  actions: readonly ReplayAction[];
  trajectory: AgentSettings["trajectory"];
  /** The draft's folder (its index.html); the provider may keep its own records there. */
  draftDir: string;
}

export type FeedbackProvider = (request: FeedbackRequest) => Promise<DraftFeedback>;

export function writeFeedback(draftDir: string, feedback: DraftFeedback): void {
  writeAgentFile(path.join(draftDir, RESULT_FILES.feedback), `${JSON.stringify(feedback, null, 2)}\n`);
}

/** A draft's feedback, or none when it was never checked or its file is unreadable. */
export function feedbackOf(workDir: string, draftId: number): DraftFeedback | undefined {
  try {
    const text = fs.readFileSync(path.join(agentWorkFiles(workDir).iteration(draftId), RESULT_FILES.feedback), "utf8");
    return DraftFeedbackSchema.parse(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Findings listed to a model at most: the cheap tail adds words, not direction. */
export const FINDINGS_SHOWN = 10;

/** Findings as the critic and the reviser read them: the costliest first, one line each. */
export function findingsText(findings: readonly FeedbackFinding[], limit = FINDINGS_SHOWN): string {
  if (findings.length === 0) return "- (none)";
  return findings
    .slice(0, limit)
    .map((finding) => `- ${finding.kind}${finding.step !== undefined ? `, action ${finding.step + 1}` : ""}: ${finding.message}`)
    .join("\n");
}
