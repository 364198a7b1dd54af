/**
 * `rescore(resultsDir, model)`: recompute every task's scores from the eval.json files
 * already on disk (`<resultsDir>/<id>/<model-dir>/eval.json`) and rewrite the model's
 * metrics report. eval.json files themselves are only read, never rewritten.
 *
 * Two kinds of eval.json are read:
 * - ours (EvalRecordSchema, `version` 1): the §3.6 lists, success_step and total_steps;
 * - the published harness's, exactly as its evaluate.py writes it: `total_step`,
 *   `success_step`, and the untruncated lists `all_ocr_scores`, `all_dino_scores`,
 *   `all_mllm_scores`, every score in [0, 1] (MLLM already divided by 100). The lists are
 *   cut to success_step + 1 entries, as its metrics code does. A file missing a key, or
 *   with a value out of range, is an error naming the file and the key.
 *   Harness results get settings `source: iwr-bench-harness`, profile official, with
 *   unknown engines, so they average with each other but never with ours.
 */
import fs from "node:fs";
import { z } from "zod";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { candidateDirFor, candidateFiles, modelFolderName } from "../results/layout.ts";
import { type AggregationInput, aggregateTask } from "./aggregate.ts";
import { EVAL_RECORD_VERSION, type EvalSettings, parseEvalRecord, readJsonFile } from "./eval-record.ts";
import { type ReportRow, writeMetricsReport } from "./report-md.ts";

const logger = log("evaluator");

const UNKNOWN = "unknown (harness eval.json)";
export const HARNESS_SETTINGS: EvalSettings = Object.freeze({
  assertionJudgeKind: UNKNOWN,
  assertionJudgeModel: UNKNOWN,
  groundingKind: UNKNOWN,
  groundingModel: UNKNOWN,
  ocrEngine: "easyocr",
  ocrEngineVersion: UNKNOWN,
  ocrEngineDetail: UNKNOWN,
  visualMetric: "dinov2-base-cls-cosine",
  dinoStatus: "available",
  mllmJudgeKind: "model",
  mllmJudgeModel: UNKNOWN,
  pairingMode: "official",
  protocol: "official",
  promptHashes: {},
  source: "iwr-bench-harness",
});

const unitList = z.array(z.number().min(0).max(1));
/** The keys the harness's metrics code reads (aggregate_requested_scores); others are ignored. */
const HarnessEvalSchema = z.looseObject({
  total_step: z.number().int().nonnegative(),
  success_step: z.number().int().nonnegative(),
  all_ocr_scores: unitList,
  all_dino_scores: unitList,
  all_mllm_scores: unitList,
});

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Maps a harness eval.json (see the module comment) to the aggregation input (MLLM back on 0–100). */
export function readHarnessEval(raw: unknown, file: string): AggregationInput {
  const parsed = HarnessEvalSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join(".") : "(root)";
    throw new IwrError(
      "EVALUATOR",
      `${file}: ${where}: ${issue?.message ?? "invalid"} ` +
        "(a harness eval.json needs total_step, success_step, all_ocr_scores, all_dino_scores, all_mllm_scores)",
      { file },
    );
  }
  const data = parsed.data;
  if (data.success_step > data.total_step)
    throw new IwrError("EVALUATOR", `${file}: success_step ${data.success_step} exceeds total_step ${data.total_step}`, { file });
  return {
    successStep: data.success_step,
    totalSteps: data.total_step,
    ocr: data.all_ocr_scores,
    dino: data.all_dino_scores,
    mllm: data.all_mllm_scores.map((score) => score * 100),
  };
}

/** Scores and settings of one eval.json, ours or the harness's. */
export function rescoreFile(file: string): Omit<ReportRow, "taskId"> {
  const raw = readJsonFile(file);
  try {
    if (isObject(raw) && raw.version === EVAL_RECORD_VERSION && "settings" in raw) {
      const record = parseEvalRecord(raw, file);
      const scores = aggregateTask({ ...record.lists, successStep: record.successStep, totalSteps: record.totalSteps });
      return { scores, settings: record.settings, hasPage: record.stopReason?.code !== "CANDIDATE_MISSING" };
    }
    // The harness writes an eval.json only for a task that has an index.html.
    return { scores: aggregateTask(readHarnessEval(raw, file)), settings: HARNESS_SETTINGS, hasPage: true };
  } catch (error) {
    if (error instanceof IwrError && error.message.startsWith(file)) throw error;
    throw new IwrError("EVALUATOR", `${file}: ${errorMessage(error)}`, { file }, { cause: error });
  }
}

export interface RescoreResult {
  rows: ReportRow[];
  /** Task folders (integer names) with no eval.json for this model. */
  missing: number[];
  reportPath: string;
}

/** Recomputes every task's scores for `model` under `resultsDir` and writes its metrics report. */
export function rescore(resultsDir: string, model: string, options: { taskOrder?: readonly number[] } = {}): RescoreResult {
  const modelDir = modelFolderName(model);
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(resultsDir, { withFileTypes: true });
  } catch (error) {
    throw new IwrError("IO", `cannot read results folder ${resultsDir}: ${errorMessage(error)}`, { resultsDir }, { cause: error });
  }
  const taskIds = entries
    .filter((entry) => entry.isDirectory() && /^\d+$/.test(entry.name))
    .map((entry) => Number(entry.name))
    .sort((a, b) => a - b);
  const rows: ReportRow[] = [];
  const missing: number[] = [];
  for (const taskId of taskIds) {
    const file = candidateFiles(candidateDirFor(resultsDir, taskId, model)).eval;
    if (!fs.existsSync(file)) {
      missing.push(taskId);
      continue;
    }
    rows.push({ taskId, ...rescoreFile(file) });
  }
  if (rows.length === 0) {
    throw new IwrError(
      "EVALUATOR",
      `no eval.json for model '${model}' under ${resultsDir} (looked in <id>/${modelDir}/eval.json for ${taskIds.length} task folder(s))`,
    );
  }
  if (missing.length > 0) logger.warn("tasks without eval.json are left out of the report", { model, missing });
  const reportPath = writeMetricsReport(resultsDir, model, rows, { missing, ...(options.taskOrder ? { taskOrder: options.taskOrder } : {}) });
  return { rows, missing, reportPath };
}
