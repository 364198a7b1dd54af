/**
 * The published harness's eval.json keys (evaluate.py's `results`), written beside our
 * richer record so the harness's own metrics code can read our files, and read back by
 * `--rescore` from files the harness wrote. Scales are the harness's: every score in
 * [0, 1] (MLLM already divided by 100), lists untruncated (its metrics code cuts them to
 * success_step + 1), one assertion entry per action (null where nothing was judged).
 *
 * The averages evaluate.py writes beside the lists are computed as it computes them, over
 * the same untruncated lists: `all_avg_scores` per entry (MLLM + DINO + OCR) / 3, empty when
 * any list is; `mllm_score`, `dino_score`, `ocr_score` each list's mean, 0 when it is empty;
 * `avg_score` the mean of `all_avg_scores`. Its metrics code does not read them (it
 * truncates and averages the lists itself); tools that read its eval.json files may.
 */
import { z } from "zod";
import { pythonSum } from "./python-rules.ts";
import type { VisualStep } from "./visual-step.ts";

export const HarnessAssertionSchema = z.looseObject({
  result: z.enum(["Yes", "No", "Error"]),
  assertion: z.string(),
  response: z.string(),
  thinking: z.string(),
  prev_img_path: z.string(),
  curr_img_path: z.string(),
});
export type HarnessAssertion = z.infer<typeof HarnessAssertionSchema>;

const unit = z.number().min(0).max(1);

/** Optional on our records: those written before the keys were added lack them. */
export const HarnessKeysSchema = z.object({
  total_step: z.number().int().nonnegative().optional(),
  success_step: z.number().int().nonnegative().optional(),
  screenshot_paths_to_eval: z.array(z.string()).optional(),
  all_mllm_scores: z.array(unit).optional(),
  all_dino_scores: z.array(unit).optional(),
  all_ocr_scores: z.array(unit).optional(),
  all_avg_scores: z.array(unit).optional(),
  mllm_score: unit.optional(),
  dino_score: unit.optional(),
  ocr_score: unit.optional(),
  avg_score: unit.optional(),
  all_mllm_res: z.array(z.string()).optional(),
  all_ocr_texts: z.array(z.object({ checkpoint_text: z.string(), screenshot_text: z.string(), similarity: unit })).optional(),
  assertion_results: z.array(HarnessAssertionSchema.nullable()).optional(),
});
export type HarnessKeys = z.infer<typeof HarnessKeysSchema>;

export interface HarnessKeyParts {
  totalSteps: number;
  successStep: number;
  /** Every scored entry of the visual list, in list order (cut entries too, when they were scored). */
  steps: readonly VisualStep[];
  assertions: readonly (HarnessAssertion | null)[];
}

/** `sum(values) / len(values) if values else 0`, as evaluate.py averages. */
const harnessMean = (values: readonly number[]): number => (values.length > 0 ? pythonSum(values) / values.length : 0);

export function harnessKeys(parts: HarnessKeyParts): Required<HarnessKeys> {
  const mllm = parts.steps.map((step) => step.mllm / 100);
  const dino = parts.steps.map((step) => step.dino);
  const ocr = parts.steps.map((step) => step.ocr);
  // zip() stops at the shortest list; the lists here are one per scored entry, of equal length.
  const perEntry = mllm.length > 0 && dino.length > 0 && ocr.length > 0 ? mllm.map((value, index) => (value + (dino[index] ?? 0) + (ocr[index] ?? 0)) / 3) : [];
  return {
    total_step: parts.totalSteps,
    success_step: parts.successStep,
    screenshot_paths_to_eval: parts.steps.map((step) => step.evalpointPath),
    all_mllm_scores: mllm,
    all_dino_scores: dino,
    all_ocr_scores: ocr,
    all_avg_scores: perEntry,
    mllm_score: harnessMean(mllm),
    dino_score: harnessMean(dino),
    ocr_score: harnessMean(ocr),
    avg_score: harnessMean(perEntry),
    all_mllm_res: parts.steps.map((step) => step.judgeReply),
    all_ocr_texts: parts.steps.map((step) => ({ checkpoint_text: step.checkpointText, screenshot_text: step.screenshotText, similarity: step.ocr })),
    assertion_results: [...parts.assertions],
  };
}
