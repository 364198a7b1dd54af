/**
 * `rescore(resultsDir, model)`: recompute every task's scores from the eval.json files
 * already on disk (`<resultsDir>/<id>/<model-dir>/eval.json`) and rewrite the model's
 * metrics report. eval.json files themselves are only read, never rewritten.
 *
 * Two kinds of eval.json are read:
 * - ours (EvalRecordSchema, `version` 1): the §3.6 lists, success_step and total_steps;
 * - the official Python harness's, read tolerantly with this mapping (first match wins;
 *   looked up on the top level, then inside `visual_scores`, `visual_evaluation`,
 *   `visual`, `scores`, `metrics`, `evaluation`, `results`):
 *     success_step ← success_step | successStep
 *     total_steps  ← total_steps | totalSteps | total_actions | num_actions,
 *                    else the length of action_results | actions | action_sequence
 *     OCR list     ← ocr_scores | ocr_similarity_scores | ocr_similarities | ocr
 *     DINO list    ← dino_scores | dino_similarity_scores | dino
 *     MLLM list    ← mllm_scores | mllm_similarity_scores | mllm
 *   A list entry is a number, or an object with a numeric `similarity` or `score`
 *   (the harness's OCR detail objects carry `similarity`). Scales are the harness's:
 *   OCR and DINO in [0, 1], MLLM in [0, 100]; anything else is an error naming the file.
 *   Harness results get settings `source: iwr-bench-harness` with unknown engines, so
 *   they average with each other but never with ours.
 */
import fs from "node:fs";
import { IwrError, errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";
import { candidateDirFor, candidateFiles, modelFolderName } from "../results/layout.ts";
import { aggregateTask, type AggregationInput } from "./aggregate.ts";
import { EVAL_RECORD_VERSION, parseEvalRecord, readJsonFile, type EvalSettings } from "./eval-record.ts";
import { writeMetricsReport, type ReportRow } from "./report-md.ts";

const logger = log("evaluator");

const CONTAINERS = ["visual_scores", "visual_evaluation", "visual", "scores", "metrics", "evaluation", "results"];
const FIELDS = {
  successStep: ["success_step", "successStep"],
  totalSteps: ["total_steps", "totalSteps", "total_actions", "num_actions"],
  actionLists: ["action_results", "actions", "action_sequence"],
  ocr: ["ocr_scores", "ocr_similarity_scores", "ocr_similarities", "ocr"],
  dino: ["dino_scores", "dino_similarity_scores", "dino"],
  mllm: ["mllm_scores", "mllm_similarity_scores", "mllm"],
} as const;

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
  promptHashes: {},
  source: "iwr-bench-harness",
});

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The top level and its known containers, in lookup order. */
function scopes(root: JsonObject): { prefix: string; object: JsonObject }[] {
  const found = [{ prefix: "", object: root }];
  for (const name of CONTAINERS) {
    const nested = root[name];
    if (isObject(nested)) found.push({ prefix: `${name}.`, object: nested });
  }
  return found;
}

function lookup(root: JsonObject, keys: readonly string[]): { where: string; value: unknown } | undefined {
  for (const { prefix, object } of scopes(root)) {
    for (const key of keys) {
      if (key in object) return { where: `${prefix}${key}`, value: object[key] };
    }
  }
  return undefined;
}

function requireInteger(file: string, root: JsonObject, keys: readonly string[]): number | undefined {
  const hit = lookup(root, keys);
  if (!hit) return undefined;
  if (typeof hit.value !== "number" || !Number.isInteger(hit.value) || hit.value < 0) {
    throw new IwrError("EVALUATOR", `${file}: ${hit.where}: expected a non-negative integer, got ${JSON.stringify(hit.value)}`);
  }
  return hit.value;
}

function readList(file: string, root: JsonObject, keys: readonly string[]): number[] {
  const hit = lookup(root, keys);
  if (!hit) throw new IwrError("EVALUATOR", `${file}: no score list found (looked for ${keys.join(" | ")} on the top level and in ${CONTAINERS.join(", ")})`);
  if (!Array.isArray(hit.value)) throw new IwrError("EVALUATOR", `${file}: ${hit.where}: expected a list, got ${JSON.stringify(hit.value)}`);
  return hit.value.map((entry, index) => {
    if (typeof entry === "number") return entry;
    if (isObject(entry)) {
      const inner = typeof entry.similarity === "number" ? entry.similarity : entry.score;
      if (typeof inner === "number") return inner;
    }
    throw new IwrError("EVALUATOR", `${file}: ${hit.where}[${index}]: expected a number or an object with a numeric similarity/score, got ${JSON.stringify(entry)}`);
  });
}

/** Maps a harness-style eval.json (see the module comment) to the aggregation input. */
export function readHarnessEval(raw: unknown, file: string): AggregationInput {
  if (!isObject(raw)) throw new IwrError("EVALUATOR", `${file}: expected a JSON object at the top level`);
  const successStep = requireInteger(file, raw, FIELDS.successStep);
  if (successStep === undefined) throw new IwrError("EVALUATOR", `${file}: no success_step (looked for ${FIELDS.successStep.join(" | ")})`);
  let totalSteps = requireInteger(file, raw, FIELDS.totalSteps);
  if (totalSteps === undefined) {
    const actions = lookup(raw, FIELDS.actionLists);
    if (!actions || !Array.isArray(actions.value)) {
      throw new IwrError("EVALUATOR", `${file}: no total_steps (looked for ${FIELDS.totalSteps.join(" | ")} or a list ${FIELDS.actionLists.join(" | ")})`);
    }
    totalSteps = actions.value.length;
  }
  return {
    successStep,
    totalSteps,
    ocr: readList(file, raw, FIELDS.ocr),
    dino: readList(file, raw, FIELDS.dino),
    mllm: readList(file, raw, FIELDS.mllm),
  };
}

/** Scores and settings of one eval.json, ours or the harness's. */
export function rescoreFile(file: string): Omit<ReportRow, "taskId"> {
  const raw = readJsonFile(file);
  try {
    if (isObject(raw) && raw.version === EVAL_RECORD_VERSION && "settings" in raw) {
      const record = parseEvalRecord(raw, file);
      const scores = aggregateTask({ ...record.lists, successStep: record.successStep, totalSteps: record.totalSteps });
      return { scores, settings: record.settings };
    }
    return { scores: aggregateTask(readHarnessEval(raw, file)), settings: HARNESS_SETTINGS };
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
export function rescore(resultsDir: string, model: string): RescoreResult {
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
    throw new IwrError("EVALUATOR", `no eval.json for model '${model}' under ${resultsDir} (looked in <id>/${modelDir}/eval.json for ${taskIds.length} task folder(s))`);
  }
  if (missing.length > 0) logger.warn("tasks without eval.json are left out of the report", { model, missing });
  const reportPath = writeMetricsReport(resultsDir, model, rows, { missing });
  return { rows, missing, reportPath };
}
