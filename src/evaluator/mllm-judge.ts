/**
 * §3.5 MLLM visual judge: a vision-language model sees the reference checkpoint, then
 * the candidate screenshot, and scores 0–100 with the rubric of prompts/judge-visual.md
 * (Layout 10, Elements 15, Content and Text 40, Style 15, Overall 20). The reply's
 * "Score: N/100" is read with the benchmark's pattern; an unparsable reply scores 0 and
 * is kept verbatim. The model sits behind `JudgeCall` (see judge-call.ts for the
 * src/models adapter), so any model client — or a test's scripted one — can answer.
 *
 * Without a judge model the named offline stand-in "offline-proxy" is used instead and
 * labelled in every result (EVALUATOR_SETTINGS.mllm.offlineProxyName).
 */
import { loadPromptOverridable, renderPrompt } from "../prompts/template.ts";
import { EVALUATOR_SETTINGS } from "./settings.ts";

/** Sends one prompt with images (PNG buffers, in order) to a vision model; resolves to its reply text. */
export type JudgeCall = (prompt: string, images: readonly Buffer[]) => Promise<string>;

export interface MllmJudgement {
  /** 0–100. */
  score: number;
  /** False when the reply had no "Score: N/100" (then score is 0). */
  parsed: boolean;
  /** The judge's reply verbatim; for the offline proxy, a line saying how the score was derived. */
  reply: string;
}

export interface MllmJudgeInfo {
  /** "model" for a real judge, "offline-proxy" for the stand-in. */
  kind: "model" | "offline-proxy";
  /** The judge model's name (ModelSpec.name), or "offline-proxy". */
  name: string;
  /** sha256 of prompts/judge-visual.md; absent for the proxy, which uses no prompt. */
  promptHash?: string;
}

export interface MllmJudge {
  readonly info: MllmJudgeInfo;
  judge(input: { reference: Buffer; candidate: Buffer; ocrSimilarity: number; visualSimilarity: number }): Promise<MllmJudgement>;
}

/** The benchmark's score parse: the first "Score: … N/100", clipped to [0, 100]; null when absent. */
export function parseJudgeScore(reply: string): number | null {
  const { scorePattern, minScore, maxScore } = EVALUATOR_SETTINGS.mllm;
  const match = scorePattern.exec(reply);
  if (!match?.[1]) return null;
  return Math.max(minScore, Math.min(maxScore, Number.parseInt(match[1], 10)));
}

/** A judge that asks a model through `call`. */
export function createModelJudge(options: { call: JudgeCall; modelName: string; promptsDir?: string; promptName?: string }): MllmJudge {
  const prompt = renderPrompt(loadPromptOverridable(options.promptName ?? EVALUATOR_SETTINGS.mllm.promptName, options.promptsDir), {});
  return {
    info: { kind: "model", name: options.modelName, promptHash: prompt.hash },
    async judge({ reference, candidate }) {
      // Reference first, then candidate: the order the harness sends them in.
      const reply = await options.call(prompt.text, [reference, candidate]);
      const score = parseJudgeScore(reply);
      return score === null ? { score: EVALUATOR_SETTINGS.mllm.unparsableScore, parsed: false, reply } : { score, parsed: true, reply };
    },
  };
}

/** The offline stand-in's score: round(100 · (OCR + visual) / 2). */
export function offlineProxyScore(ocrSimilarity: number, visualSimilarity: number): number {
  return Math.round((100 * (ocrSimilarity + visualSimilarity)) / 2);
}

/** The offline stand-in judge (no model): see EVALUATOR_SETTINGS.mllm.offlineProxyName. */
export function createOfflineProxyJudge(): MllmJudge {
  const name = EVALUATOR_SETTINGS.mllm.offlineProxyName;
  return {
    info: { kind: "offline-proxy", name },
    async judge({ ocrSimilarity, visualSimilarity }) {
      const score = offlineProxyScore(ocrSimilarity, visualSimilarity);
      return { score, parsed: true, reply: `${name}: round(100 * (ocr ${ocrSimilarity.toFixed(4)} + visual ${visualSimilarity.toFixed(4)}) / 2) = ${score}` };
    },
  };
}
