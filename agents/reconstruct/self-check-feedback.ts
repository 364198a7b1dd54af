/**
 * The agent's usual feedback: the self-check (src/selfcheck) of a draft, from the task's
 * inputs and the run's actions only. Its record (selfcheck.json, self-check/*.png) stays in
 * the draft's folder; the feedback is its self-score, its findings and the (video frame,
 * screenshot) pairs that match worst.
 */
import fs from "node:fs";
import path from "node:path";
import { runSelfCheck, type SelfCheckOptions, type SelfCheckRecord } from "../../src/selfcheck/self-check.ts";
import type { ComparisonPair, FeedbackProvider } from "./feedback.ts";

/** The parts a run shares between its self-checks: the visual metric, page slots, limits, the states cache. */
export type SelfCheckParts = Omit<SelfCheckOptions, "inputs" | "actions" | "trajectory" | "candidateDir" | "outDir">;

/**
 * The pairs worth showing, most telling first: those the costliest findings name, then the
 * screenshots least like their video state; one pair per screenshot.
 */
export function worstPairs(record: SelfCheckRecord, recordDir: string): ComparisonPair[] {
  const pairs: ComparisonPair[] = [];
  const seen = new Set<string>();
  const add = (screenshot: string | undefined, videoFrame: string | undefined, caption: string) => {
    if (!screenshot || !videoFrame) return;
    const file = path.resolve(recordDir, screenshot);
    if (seen.has(file) || !fs.existsSync(file) || !fs.existsSync(videoFrame)) return;
    seen.add(file);
    pairs.push({ reference: videoFrame, screenshot: file, caption });
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

export function selfCheckFeedback(parts: SelfCheckParts): FeedbackProvider {
  return async (request) => {
    const record = await runSelfCheck({
      ...parts,
      inputs: request.inputs,
      actions: request.actions,
      trajectory: request.trajectory,
      candidateDir: request.draftDir,
    });
    return {
      score: record.selfScore,
      behaviour: record.behaviour,
      appearance: record.appearance,
      findings: record.findings.map(({ kind, cost, message, step }) => ({ kind, cost, message, ...(step !== undefined ? { step } : {}) })),
      pairs: worstPairs(record, request.draftDir),
    };
  };
}
