/**
 * One experiment cell's numbers for the report, read from its eval.json and cell.json:
 * the benchmark's scores, VFS with unreached checkpoints counted as 0 (our extra metric),
 * tokens, cost and time, the per-step rows the HTML shows, and the judge's own spread when
 * each assertion was judged several times.
 */
import path from "node:path";
import { type EvalRecord, verifyEvalRecord } from "../evaluator/eval-record.ts";
import { EVALUATOR_SETTINGS } from "../evaluator/settings.ts";
import type { CellRecord } from "../results/cell-record.ts";
import { RESULT_FILES } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";
import { type FirstFailure, firstFailure, readReplayDigest } from "./failures.ts";
import { mean, sum } from "./statistics.ts";

export interface StepRow {
  position: number;
  actionIndex: number | null;
  checkpointPath: string;
  evalpointPath: string;
  ocr: number;
  dino: number;
  mllm: number;
  /** The judge's verdict on the step's assertion, when it had one. */
  verdict?: "Yes" | "No" | "Error";
}

export interface CellScores {
  arm: string;
  /** The cell's candidate folder. */
  dir: string;
  repeat: number;
  taskId: number;
  status: CellRecord["status"];
  error?: string;
  /** A record of the cell that could not be read (damaged or missing), and why: the cell counts as failed until a rerun recomputes it. */
  damaged?: string;
  hasPage: boolean;
  ifs: number;
  lfs: number;
  hfs: number;
  vfs: number;
  final: number;
  /** VFS with unreached checkpoints counted as 0 (our extra). */
  vfsAllCheckpoints: number;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  wallMs: number;
  selfScore?: number;
  /** The self-check's score of the page (given track), when the experiment ran it. */
  selfCheckScore?: number;
  steps: StepRow[];
  /** Checkpoints the task has (the denominator of vfsAllCheckpoints). */
  checkpoints: number;
  /** The task's actions, and how many of them the replay executed (its screenshots are evalpoints/0..executedSteps.png). */
  totalSteps: number;
  executedSteps: number;
  /** The first step that did not pass and why (failures.ts); absent when every step passed. */
  failure?: FirstFailure;
  /** With judge repeats: judged steps, those whose judgements disagreed, and the SD of IFS over the repeats. */
  judge?: { repeats: number; judgedSteps: number; disagreeing: number; ifsSd: number };
  /** The measuring engines its eval.json was scored with (OCR engine, version and options; visual metric), when it has one. */
  engines?: string;
}

/**
 * The cell's eval.json when the cell says it was scored, verified. A damaged or missing one
 * is a problem to report (the cell fails with it), never a row of zeros: a rerun of the
 * experiment scores the cell again.
 */
function readEval(record: CellRecord, dir: string): { evaluation?: EvalRecord; problem?: string } {
  const file = path.join(dir, RESULT_FILES.eval);
  const scored = record.produced.status === "made" && record.evaluation.status !== "failed";
  const read = verifyEvalRecord(file);
  if (read.status === "ok") return { evaluation: read.value };
  if (!scored) return {};
  const what = read.status === "missing" ? "is missing" : `is damaged (${read.reason})`;
  return { problem: `${file} ${what}: the cell's scores cannot be read; iwr run on the config scores it again` };
}

/** What a cell's scores need of its task: the checkpoints it has and its actions' types. */
export type ScoredTask = { truth: Pick<Task["truth"], "checkpointPaths" | "actions"> };

/** One cell's scores from its eval.json (zeros when the evaluator left none: the cell failed; a damaged eval.json fails it too, saying so). */
export function cellScores(record: CellRecord, dir: string, task: ScoredTask): CellScores {
  const { evaluation, problem } = readEval(record, dir);
  const checkpoints = task.truth.checkpointPaths.length;
  const scores = evaluation?.scores;
  const lists = evaluation?.lists ?? { ocr: [], dino: [], mllm: [] };
  // Unreached checkpoints count as 0: the sums over reached steps divided by every checkpoint.
  const denominator = Math.max(1, checkpoints);
  const { weights } = EVALUATOR_SETTINGS.protocol;
  const lfsAll = (sum(lists.ocr) / denominator + sum(lists.dino) / denominator) / 2;
  const hfsAll = sum(lists.mllm) / 100 / denominator;
  const error = problem
    ? `evaluate: RECORD_DAMAGED: ${problem}`
    : record.error
      ? `${record.error.stage}: ${record.error.code}: ${record.error.message}`
      : undefined;
  const failure = firstFailure({
    pageMade: record.produced.status === "made",
    ...(error ? { cellError: error } : {}),
    ...(evaluation ? { evaluation } : {}),
    ...(evaluation ? { replay: readReplayDigest(path.join(dir, RESULT_FILES.replay)) } : {}),
    actionTypes: task.truth.actions.map((action) => action.type),
  });
  const verdicts = new Map((evaluation?.assertions ?? []).map((assertion) => [assertion.actionIndex, assertion.result]));
  return {
    arm: record.arm,
    dir,
    repeat: record.repeat,
    taskId: record.taskId,
    status: problem ? "failed" : record.status,
    ...(error ? { error } : {}),
    ...(problem ? { damaged: problem } : {}),
    // The report's stand-in for a cell whose cell.json could not be read (report.ts).
    ...(!problem && record.error?.code === "RECORD_DAMAGED" ? { damaged: record.error.message } : {}),
    hasPage: record.produced.status === "made",
    ifs: scores?.ifs ?? 0,
    lfs: scores?.lfs ?? 0,
    hfs: scores?.hfs ?? 0,
    vfs: scores?.vfs ?? 0,
    final: scores?.final ?? 0,
    vfsAllCheckpoints: weights.lfsInVfs * lfsAll + weights.hfsInVfs * hfsAll,
    tokens: record.produced.usage.inputTokens + record.produced.usage.outputTokens,
    inputTokens: record.produced.usage.inputTokens,
    outputTokens: record.produced.usage.outputTokens,
    costUsd: record.produced.usage.costUsd,
    wallMs: record.produced.wallMs + record.evaluation.wallMs,
    ...(record.produced.selfScore !== undefined ? { selfScore: record.produced.selfScore } : {}),
    ...(record.selfCheck?.selfScore !== undefined ? { selfCheckScore: record.selfCheck.selfScore } : {}),
    steps: (evaluation?.steps ?? []).map((step) => ({
      position: step.position,
      actionIndex: step.actionIndex,
      checkpointPath: step.checkpointPath,
      evalpointPath: path.resolve(dir, step.evalpointPath),
      ocr: step.ocr,
      dino: step.dino,
      mllm: step.mllm,
      ...(step.actionIndex !== null && verdicts.has(step.actionIndex) ? { verdict: verdicts.get(step.actionIndex)! } : {}),
    })),
    checkpoints,
    totalSteps: evaluation?.totalSteps ?? task.truth.actions.length,
    executedSteps: evaluation?.executedSteps ?? 0,
    ...(failure ? { failure } : {}),
    ...(evaluation ? judgeSpread(evaluation) : {}),
    ...(evaluation ? { engines: measuringEngines(evaluation) } : {}),
  };
}

function measuringEngines(evaluation: EvalRecord): string {
  const { settings } = evaluation;
  return `OCR ${settings.ocrEngine} ${settings.ocrEngineVersion} (${settings.ocrEngineDetail}), visual ${settings.visualMetric}`;
}

/**
 * The judge's own spread in one cell: IFS recomputed with each repeat's verdicts (the
 * first failing step ends the count, as it does for the scored IFS), and its SD. Visual
 * scores are not recomputed: steps past the scored success_step were never scored.
 */
function judgeSpread(evaluation: EvalRecord): Pick<CellScores, "judge"> | Record<string, never> {
  const repeated = evaluation.assertions.filter((assertion) => assertion.repeats && assertion.repeats.length > 1);
  if (repeated.length === 0) return {};
  const repeats = Math.max(...repeated.map((assertion) => assertion.repeats!.length));
  const ifsOf = (repeat: number) => {
    const failing = evaluation.assertions.filter(
      (assertion) => assertion.actionIndex < evaluation.executedSteps && (assertion.repeats?.[repeat] ?? assertion.result) === "No",
    );
    const success = failing.reduce((lowest, assertion) => Math.min(lowest, assertion.actionIndex), evaluation.executedSteps);
    return evaluation.totalSteps === 0 ? 0 : success / evaluation.totalSteps;
  };
  const values = Array.from({ length: repeats }, (_, repeat) => ifsOf(repeat));
  const average = mean(values);
  const ifsSd = Math.sqrt(values.reduce((sum, value) => sum + (value - average) ** 2, 0) / Math.max(1, values.length - 1));
  return { judge: { repeats, judgedSteps: repeated.length, disagreeing: repeated.filter((assertion) => new Set(assertion.repeats).size > 1).length, ifsSd } };
}
