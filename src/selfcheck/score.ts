/**
 * The self-score and the findings of a self-check.
 *
 *   selfScore  = 0.7 · behaviour + 0.3 · appearance          (IWR's split, §3.6)
 *   behaviour  = (steps that executed and changed the screen exactly when the aligned
 *                 video did — and, when both changed, the same way: the words the video
 *                 gained, or the place it changed, see step-evidence.ts) / actions;
 *                 steps after the first that failed count 0, as IFS cuts at
 *                 success_step; 1 when there is no action to check
 *   appearance = mean over the screenshots the replay should have taken (the initial one
 *                and one per action) of (text + image similarity) / 2 with its aligned
 *                state; a screenshot not taken (its step did not execute) counts 0
 *
 * Without stable video states there is nothing to align with: a step counts when it
 * executed and changed the screen, appearance is 0, and a finding says why.
 *
 * Findings are ranked by what each costs the self-score: a failed step the credit of
 * it and every step after it (0.7 · (n − k) / n), a step that changed too little or too
 * much or not as the video did 0.7 / n, an unlike screenshot 0.3 · (1 − similarity) / screenshots; lint costs
 * nothing but is listed. Each names the screenshot and the video frame it concerns.
 */
import type { VideoState } from "../media/video-states.ts";
import type { Alignment } from "./compare.ts";
import type { LintFinding } from "./lint.ts";
import type { SelfReplayResult } from "./self-replay.ts";
import type { StepEvidence } from "./step-evidence.ts";

export const SELF_SCORE_WEIGHTS = Object.freeze({ behaviour: 0.7, appearance: 0.3 });
/** Screenshots at least this like their video state are not worth a finding. */
const APPEARANCE_FINDING_BELOW = 0.95;

export type FindingKind = "step-failed" | "no-change" | "unexpected-change" | "wrong-change" | "appearance" | "page-error" | "lint" | "video";

export interface Finding {
  kind: FindingKind;
  /** Self-score points this finding costs (what fixing it would win back at most). */
  cost: number;
  message: string;
  /** 0-based action index, when it is about a step. */
  step?: number;
  /** Screenshot (relative to the record) and video frame (absolute) it concerns. */
  screenshot?: string;
  videoFrame?: string;
  videoSec?: number;
}

export interface StepVerdict {
  index: number;
  executed: boolean;
  screenChanged: boolean;
  /** Undefined without video states. */
  videoChanged?: boolean;
  /** The screenshot after the step matched this state. */
  state?: number;
  /** When page and video both changed: whether the page's change was the video's. */
  evidence?: StepEvidence;
  credited: boolean;
}

export interface SelfScore {
  selfScore: number;
  behaviour: number;
  appearance: number;
  steps: StepVerdict[];
  findings: Finding[];
}

export interface ScoreInputs {
  replay: SelfReplayResult;
  states: readonly VideoState[];
  alignment: Alignment;
  lint: readonly LintFinding[];
  /** Per step, when the page and its aligned video both changed: how alike the changes were. */
  evidence: ReadonlyArray<StepEvidence | undefined>;
  /** How findings cite screenshot i. */
  screenshotLabel: (index: number) => string;
}

const quoteWords = (words: readonly string[]) =>
  words
    .slice(0, 6)
    .map((word) => `'${word}'`)
    .join(", ") + (words.length > 6 ? ", …" : "");

/** Why a change was not the video's, in a critic's words. */
function wrongChangeDetail(evidence: StepEvidence): string {
  if (evidence.by === "text") {
    const missing = `the video newly shows ${quoteWords(evidence.videoNew)}`;
    return evidence.pageNew.length > 0 ? `${missing}, the page newly shows ${quoteWords(evidence.pageNew)} instead` : `${missing}, the page shows no new word`;
  }
  if (evidence.stray !== undefined && evidence.stray > 0) return `the page newly shows ${quoteWords(evidence.pageNew)}, which the video does not show`;
  return `the page changed elsewhere than the video (overlap of the changed places ${(evidence.overlap ?? 0).toFixed(2)})`;
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

export function scoreSelfCheck(inputs: ScoreInputs): SelfScore {
  const { replay, states, alignment } = inputs;
  const n = replay.steps.length;
  const findings: Finding[] = [];
  const frame = (state: number | undefined) => (state === undefined ? {} : { videoFrame: states[state]?.framePath, videoSec: states[state]?.frameSec });
  const steps: StepVerdict[] = [];
  let failed = false;
  for (const step of replay.steps) {
    const k = step.index;
    const before = alignment.states[k];
    const after = alignment.states[k + 1];
    const verdict: StepVerdict = { index: k, executed: step.executed, screenChanged: step.screenChanged, credited: false };
    if (!step.executed || failed) {
      if (!failed) {
        failed = true;
        findings.push({
          kind: "step-failed",
          cost: (SELF_SCORE_WEIGHTS.behaviour * (n - k)) / n,
          message:
            `action ${k} (${step.action.type} ${JSON.stringify(step.action.description)}) did not execute: ${step.failure ?? "unknown"}; ` +
            `the ${n - k} step(s) from it on count nothing`,
          step: k,
          screenshot: inputs.screenshotLabel(k),
          ...frame(before === undefined ? undefined : Math.min(before + 1, states.length - 1)),
        });
      }
      steps.push(verdict);
      continue;
    }
    if (states.length === 0) {
      verdict.credited = step.screenChanged;
    } else if (before !== undefined && after !== undefined) {
      // Distinct states differ in content by construction (video-states.ts ignores the pointer and the caret).
      const videoChanged = before !== after;
      const evidence = videoChanged && step.screenChanged ? inputs.evidence[k] : undefined;
      verdict.videoChanged = videoChanged;
      verdict.state = after;
      if (evidence) verdict.evidence = evidence;
      verdict.credited = videoChanged === step.screenChanged && (evidence === undefined || evidence.reproduced);
      if (!verdict.credited) {
        const next = Math.min(before + 1, states.length - 1);
        const what = `action ${k} (${step.action.type} ${JSON.stringify(step.action.description)})`;
        const common = { cost: SELF_SCORE_WEIGHTS.behaviour / n, step: k, screenshot: inputs.screenshotLabel(k + 1) };
        findings.push(
          evidence
            ? {
                kind: "wrong-change",
                ...common,
                message:
                  `${what} changed the page, but not as the video does here ` +
                  `(to the state at ${states[after]?.startSec.toFixed(1)} s): ${wrongChangeDetail(evidence)}`,
                ...frame(after),
              }
            : videoChanged
              ? {
                  kind: "no-change",
                  ...common,
                  message:
                    `${what} changed the page by only ${step.changedPixels} pixels, ` +
                    `but the video changes here (to the state at ${states[after]?.startSec.toFixed(1)} s)`,
                  ...frame(after === before ? next : after),
                }
              : {
                  kind: "unexpected-change",
                  ...common,
                  message: `${what} changed ${step.changedPixels} pixels of the page, but the video shows no change here`,
                  ...frame(after),
                },
        );
      }
    }
    for (const error of step.pageErrors) {
      findings.push({
        kind: "page-error",
        cost: 0,
        message: `action ${k} raised a script error: ${error}`,
        step: k,
        screenshot: inputs.screenshotLabel(k + 1),
      });
    }
    steps.push(verdict);
  }
  const behaviour = n === 0 ? 1 : steps.filter((verdict) => verdict.credited).length / n;

  const aligned = alignment.similarities.length;
  const expected = Math.max(aligned, n + 1);
  const appearance = states.length === 0 || aligned === 0 ? 0 : alignment.similarities.reduce((sum, pair) => sum + pair.combined, 0) / expected;
  alignment.similarities.forEach((pair, index) => {
    if (pair.combined >= APPEARANCE_FINDING_BELOW) return;
    const state = alignment.states[index];
    findings.push({
      kind: "appearance",
      cost: (SELF_SCORE_WEIGHTS.appearance * (1 - pair.combined)) / expected,
      message:
        `screenshot ${index} looks unlike the video at ${state === undefined ? "?" : states[state]?.frameSec.toFixed(1)} s: ` +
        `text similarity ${pair.text.toFixed(2)}, image similarity ${pair.image.toFixed(2)}`,
      ...(index > 0 ? { step: index - 1 } : {}),
      screenshot: inputs.screenshotLabel(index),
      ...frame(state),
    });
  });
  if (states.length === 0)
    findings.push({
      kind: "video",
      cost: SELF_SCORE_WEIGHTS.appearance,
      message: "the video has no stable state to compare the page with: appearance counts 0, steps count when they changed the screen",
    });
  if (n === 0)
    findings.push({ kind: "step-failed", cost: 0, message: "no action to replay: the page's behaviour was not checked (behaviour counts 1), only its look" });
  if (replay.error) findings.push({ kind: "step-failed", cost: 0, message: `the page broke down: ${replay.error.code}: ${replay.error.message}` });
  for (const item of inputs.lint) findings.push({ kind: "lint", cost: 0, message: `${item.kind}: ${item.detail}` });

  findings.sort((a, b) => b.cost - a.cost);
  const selfScore = SELF_SCORE_WEIGHTS.behaviour * behaviour + SELF_SCORE_WEIGHTS.appearance * appearance;
  return {
    selfScore: round(selfScore),
    behaviour: round(behaviour),
    appearance: round(appearance),
    steps,
    findings: findings.map((finding) => ({ ...finding, cost: round(finding.cost) })),
  };
}
