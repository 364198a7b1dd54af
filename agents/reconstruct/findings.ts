/**
 * A draft's self-check findings as the critic and the reviser read them: the costliest
 * first, each one line, with the step and moment of the video it concerns.
 */
import fs from "node:fs";
import path from "node:path";
import { agentFiles, RESULT_FILES } from "../../src/results/layout.ts";
import type { Finding } from "../../src/selfcheck/score.ts";
import type { SelfCheckRecord } from "../../src/selfcheck/self-check.ts";

/** Findings listed to a model at most: the cheap tail adds words, not direction. */
export const FINDINGS_SHOWN = 10;

export function findingsOf(workDir: string, draftId: number): Finding[] {
  try {
    return JSON.parse(fs.readFileSync(path.join(agentFiles(workDir).iteration(draftId), RESULT_FILES.findings), "utf8")) as Finding[];
  } catch {
    return [];
  }
}

export function selfCheckRecordOf(workDir: string, draftId: number): SelfCheckRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(agentFiles(workDir).iteration(draftId), RESULT_FILES.selfCheck), "utf8")) as SelfCheckRecord;
  } catch {
    return undefined;
  }
}

export function findingsText(findings: readonly Finding[], limit = FINDINGS_SHOWN): string {
  if (findings.length === 0) return "- (none)";
  return findings
    .slice(0, limit)
    .map((finding) => `- ${finding.kind}${finding.step !== undefined ? `, action ${finding.step + 1}` : ""}: ${finding.message}`)
    .join("\n");
}
