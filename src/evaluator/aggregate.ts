/**
 * §3.6 aggregation, exactly as the benchmark defines it:
 *   every list (OCR, DINO, MLLM per evalpoint) truncated to its first success_step + 1 entries;
 *   IFS = success_step / total_steps
 *   LFS = (mean OCR + mean DINO) / 2          (OCR, DINO in [0, 1])
 *   HFS = mean MLLM / 100                     (MLLM in [0, 100])
 *   VFS = 0.5·LFS + 0.5·HFS
 *   Final = 0.7·IFS + 0.3·VFS
 * and the benchmark score is the unweighted mean over tasks.
 *
 * Edge cases (the benchmark does not state them): the mean of an empty list is 0, not
 * numpy's nan (EVALUATOR_SETTINGS.aggregation.emptyMean), so a task whose page never
 * loaded scores 0 visually instead of poisoning the average; total_steps 0 gives IFS 0.
 */
import { IwrError } from "../errors.ts";
import { EVALUATOR_SETTINGS } from "./settings.ts";

export interface StepLists {
  ocr: readonly number[];
  dino: readonly number[];
  mllm: readonly number[];
}

export interface AggregationInput extends StepLists {
  successStep: number;
  totalSteps: number;
}

/** All in [0, 1]. */
export interface TaskScores {
  ifs: number;
  lfs: number;
  hfs: number;
  vfs: number;
  final: number;
  /** Means of the truncated lists (OCR, DINO in [0, 1]; MLLM in [0, 100]). */
  ocrMean: number;
  dinoMean: number;
  mllmMean: number;
  /** Entries that counted (≤ success_step + 1). */
  countedSteps: number;
}

export const SCORE_KEYS = ["lfs", "hfs", "ifs", "vfs", "final", "ocrMean", "dinoMean", "mllmMean"] as const;
export type ScoreKey = (typeof SCORE_KEYS)[number];

export function mean(values: readonly number[]): number {
  if (values.length === 0) return EVALUATOR_SETTINGS.aggregation.emptyMean;
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function checkRange(name: string, values: readonly number[], max: number): void {
  values.forEach((value, index) => {
    if (!Number.isFinite(value) || value < 0 || value > max) {
      throw new IwrError("EVALUATOR", `${name}[${index}]: expected a number in [0, ${max}], got ${value}`);
    }
  });
}

export function aggregateTask(input: AggregationInput): TaskScores {
  const { successStep, totalSteps } = input;
  if (!Number.isInteger(totalSteps) || totalSteps < 0) throw new IwrError("EVALUATOR", `total_steps: expected a non-negative integer, got ${totalSteps}`);
  if (!Number.isInteger(successStep) || successStep < 0 || successStep > totalSteps) {
    throw new IwrError("EVALUATOR", `success_step: expected an integer in [0, ${totalSteps}], got ${successStep}`);
  }
  checkRange("ocr", input.ocr, 1);
  checkRange("dino", input.dino, 1);
  checkRange("mllm", input.mllm, 100);

  const keep = successStep + 1;
  const ocr = input.ocr.slice(0, keep);
  const dino = input.dino.slice(0, keep);
  const mllm = input.mllm.slice(0, keep);
  const { weights } = EVALUATOR_SETTINGS.protocol;

  const ifs = totalSteps === 0 ? EVALUATOR_SETTINGS.aggregation.ifsWithoutSteps : successStep / totalSteps;
  const ocrMean = mean(ocr);
  const dinoMean = mean(dino);
  const mllmMean = mean(mllm);
  const lfs = (ocrMean + dinoMean) / 2;
  const hfs = mllmMean / 100;
  const vfs = weights.lfsInVfs * lfs + weights.hfsInVfs * hfs;
  const final = weights.ifs * ifs + weights.vfs * vfs;
  return { ifs, lfs, hfs, vfs, final, ocrMean, dinoMean, mllmMean, countedSteps: Math.max(ocr.length, dino.length, mllm.length) };
}

/** The benchmark score: the unweighted mean of every score over tasks (0 tasks → an error, not a nan). */
export function averageScores(tasks: readonly TaskScores[]): Record<ScoreKey, number> {
  if (tasks.length === 0) throw new IwrError("EVALUATOR", "cannot average scores over zero tasks");
  const result = {} as Record<ScoreKey, number>;
  for (const key of SCORE_KEYS) result[key] = mean(tasks.map((task) => task[key]));
  return result;
}
