/**
 * The numbers of an experiment's report (report.json), computed from the run folder's
 * cell.json and eval.json files only, so `iwr report <dir>` gives the same report as the
 * end of the run, and a report can be rebuilt after a crash.
 *
 * Per arm: means over tasks (a task's repeats averaged first) of IFS, LFS, HFS, VFS and
 * Final; success rate (tasks whose replay passed every step, IFS = 1); coverage (cells
 * with a page); tokens, cost and wall time. Also, labelled as our own extras:
 *   - Final under other weightings α·IFS + (1 − α)·VFS (α = 0.5, 0.7 (the benchmark's), 0.9);
 *   - VFS counting unreached checkpoints as 0 (the benchmark's VFS averages over reached
 *     steps only, which flatters a page that fails early).
 * Per interaction and visual class: each arm's mean Final. The paired per-task difference
 * in Final between two arms, with a percentile bootstrap 95 % interval over tasks. For
 * agent arms: the evaluator's Final of each saved draft by round (the score-by-iteration
 * curve, never fed back to the agent) and the agent's self-score beside it.
 *
 * When an agent arm ran with oracle feedback (the evaluator's verdict on each draft: the
 * task's truth, a separate track), the report sets it beside the usual agent and the single
 * pass of the same model: per task and overall Final of the three, and the paired
 * differences (oracle − self-check, self-check − single pass, oracle − single pass) with
 * their bootstrap intervals — how much better refinement does when its feedback is perfect.
 */
import { IwrError } from "../errors.ts";
import { EVALUATOR_SETTINGS } from "../evaluator/settings.ts";
import type { CellRecord } from "../results/cell-record.ts";
import { ORACLE_FEEDBACK_LABEL } from "../results/tracks.ts";
import type { Task } from "../tasks/schema.ts";
import {
  type FeedbackBound,
  feedbackBounds,
  type IterationCurve,
  iterationCurve,
  type ReportArm,
  type SelfCheckAgreement,
  selfCheckAgreement,
} from "./agent-report-parts.ts";
import { type ArmSummary, armSummaries, type ClassTables, type Comparison, classTables, pairedComparison } from "./arm-scores.ts";
import { type CellScores, cellScores } from "./cell-scores.ts";
import { type FailureSummary, type FailureTask, failureSummary } from "./failures.ts";
import { mean, sum } from "./statistics.ts";

export type { CellScores } from "./cell-scores.ts";

export const REPORT_VERSION = 1;

/** The judge's own noise, per arm, when the evaluator judged each assertion several times. */
export interface JudgeNoise {
  repeats: number;
  perArm: Array<{ arm: string; judgedSteps: number; disagreeing: number; meanIfsSd: number; finalSdFromJudge: number }>;
}

export interface ReportData {
  version: number;
  name: string;
  createdAt: string;
  evaluator: Record<string, unknown>;
  arms: ArmSummary[];
  tasks: Array<{
    id: number;
    site: string;
    interaction: string;
    visual: string;
    checkpointPaths: string[];
    /** Per action: its type, and the checkpoint (k of step_<k>.png) that shows the state after it, when it is flagged. */
    actions: Array<{ type: string; checkpoint: number | null }>;
  }>;
  cells: CellScores[];
  byClass: ClassTables;
  /** Why steps failed, which actions fail most, which tasks no arm passes (failures.ts). */
  failures: FailureSummary;
  comparison?: Comparison;
  /** One per agent arm with oracle feedback. */
  feedbackBounds?: FeedbackBound[];
  curves: IterationCurve[];
  selfCheck?: SelfCheckAgreement;
  judgeNoise?: JudgeNoise;
  notes: string[];
}

/** Per action: its type and the checkpoint showing the state after it (the k-th flagged action's is step_<k>), or null. */
export function actionCheckpoints(task: Task): Array<{ type: string; checkpoint: number | null }> {
  let flagged = 0;
  return task.truth.actions.map((action) => ({ type: action.type, checkpoint: action.visual_evaluation_flag ? ++flagged : null }));
}

/** What the failure summary needs of a task. */
export function failureTaskOf(task: Task): FailureTask {
  return {
    id: task.id,
    site: task.meta.sourceWebsite,
    interaction: task.meta.interactionComplexity,
    visual: task.meta.visualComplexity,
    actionTypes: task.truth.actions.map((action) => action.type),
  };
}

/**
 * Scores read by different OCR engines (or visual metrics) are not comparable: a report
 * over cells scored with more than one refuses, naming which cells used which.
 */
function refuseMixedEngines(cells: readonly CellScores[]): void {
  const byEngines = new Map<string, string[]>();
  for (const cell of cells) if (cell.engines) byEngines.set(cell.engines, [...(byEngines.get(cell.engines) ?? []), `${cell.arm}/task ${cell.taskId}`]);
  if (byEngines.size <= 1) return;
  const listed = [...byEngines].map(
    ([engines, where]) => `'${engines}' (${where.slice(0, 6).join(", ")}${where.length > 6 ? `, … ${where.length} cells` : ""})`,
  );
  throw new IwrError(
    "EVALUATOR",
    `refusing to average cells scored with different measuring engines: ${listed.join(" vs ")}; re-evaluate them with one engine`,
  );
}

export function buildReportData(input: {
  name: string;
  evaluator: Record<string, unknown>;
  arms: readonly ReportArm[];
  tasks: readonly Task[];
  records: ReadonlyArray<{ record: CellRecord; dir: string }>;
  compare?: [string, string];
  resamples: number;
}): ReportData {
  const taskById = new Map(input.tasks.map((task) => [task.id, task]));
  const cells = input.records.flatMap(({ record, dir }) => {
    const task = taskById.get(record.taskId);
    return task ? [cellScores(record, dir, task)] : [];
  });
  refuseMixedEngines(cells);
  const arms = armSummaries(input.arms, cells, input.resamples);

  const pair = input.compare ?? (input.arms.length >= 2 ? [input.arms[0]!.name, input.arms[1]!.name] : undefined);
  const comparison = pair ? pairedComparison(cells, pair[0], pair[1], input.resamples) : undefined;
  const bounds = feedbackBounds(input.arms, cells, input.resamples);

  const records = input.records.map(({ record }) => record);
  const selfCheck = selfCheckAgreement(cells);
  const judged = cells.filter((cell) => cell.judge);
  const judgeNoise: JudgeNoise | undefined =
    judged.length === 0
      ? undefined
      : {
          repeats: Math.max(...judged.map((cell) => cell.judge!.repeats)),
          perArm: input.arms.flatMap((arm) => {
            const mine = judged.filter((cell) => cell.arm === arm.name);
            if (mine.length === 0) return [];
            const meanIfsSd = mean(mine.map((cell) => cell.judge!.ifsSd));
            return [
              {
                arm: arm.name,
                judgedSteps: sum(mine.map((cell) => cell.judge!.judgedSteps)),
                disagreeing: sum(mine.map((cell) => cell.judge!.disagreeing)),
                meanIfsSd,
                finalSdFromJudge: EVALUATOR_SETTINGS.protocol.weights.ifs * meanIfsSd,
              },
            ];
          }),
        };
  const curves = input.arms.flatMap((arm) => iterationCurve(arm.name, records) ?? []);
  const usedTasks = input.tasks.filter((task) => cells.some((cell) => cell.taskId === task.id));
  return {
    version: REPORT_VERSION,
    name: input.name,
    createdAt: new Date().toISOString(),
    evaluator: input.evaluator,
    arms,
    tasks: usedTasks.map((task) => ({
      id: task.id,
      site: task.meta.sourceWebsite,
      interaction: task.meta.interactionComplexity,
      visual: task.meta.visualComplexity,
      checkpointPaths: [...task.truth.checkpointPaths],
      actions: actionCheckpoints(task),
    })),
    cells,
    byClass: classTables(input.arms, cells, taskById),
    failures: failureSummary(cells, usedTasks.map(failureTaskOf), input.arms),
    ...(comparison ? { comparison } : {}),
    ...(bounds.length > 0 ? { feedbackBounds: bounds } : {}),
    curves,
    ...(selfCheck ? { selfCheck } : {}),
    ...(judgeNoise ? { judgeNoise } : {}),
    notes: [
      "Final, IFS, VFS: the benchmark's definitions (docs/protocol.md §3.6), means over tasks (a task's repeats averaged first).",
      "success rate: share of tasks whose replay passed every step (IFS = 1); coverage: share of cells with a page.",
      "Final at α: α·IFS + (1 − α)·VFS; the benchmark's is α = 0.7.",
      "VFS (all checkpoints): our extra metric, unreached checkpoints counted as 0; the published VFS averages reached steps only.",
      "Interval: percentile bootstrap over tasks of the mean paired difference in Final (seeded).",
      ...(bounds.length > 0
        ? [
            `An agent arm with ${ORACLE_FEEDBACK_LABEL} was told the fixed evaluator's verdict on each of its drafts (which step failed and why, ` +
              "the reference checkpoints): an upper bound of what refinement gains with perfect feedback, not a generator; " +
              "its score-by-iteration curve is the score it was fed back.",
          ]
        : []),
      "Judge noise (with judge repeats): per cell, IFS recomputed with each repeat's verdicts; its SD, times IFS's weight in Final (0.7), " +
        "is the part of Final's spread the judge alone causes (visual scores are not re-judged).",
      "Self-check agreement (when run): per task, Spearman ρ and pairwise order agreement between the self-check's score " +
        "and the evaluator's Final over the arms' pages; given track (the task's action descriptions replayed, never its checkpoints or assertions).",
    ],
  };
}
