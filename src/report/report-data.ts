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
import { type AgentFeedbackKind, ORACLE_FEEDBACK_LABEL } from "../results/tracks.ts";
import { trackingOf } from "../selfcheck/tracking.ts";
import type { Task } from "../tasks/schema.ts";
import { type CellScores, cellScores } from "./cell-scores.ts";
import { type FailureSummary, type FailureTask, failureSummary } from "./failures.ts";
import { bootstrapMeanInterval, mean, sum } from "./statistics.ts";

export type { CellScores } from "./cell-scores.ts";

export const REPORT_VERSION = 1;
export const ALPHAS = [0.5, 0.7, 0.9] as const;

export interface ArmSummary {
  name: string;
  kind: string;
  tasks: number;
  cells: number;
  failed: number;
  coverage: number;
  successRate: number;
  ifs: number;
  /** Percentile bootstrap 95 % intervals over tasks of the mean Final and IFS (seeded, the report's resamples). */
  ci95: { final: [number, number]; ifs: [number, number] };
  lfs: number;
  hfs: number;
  vfs: number;
  final: number;
  finalByAlpha: Record<string, number>;
  vfsAllCheckpoints: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  wallMs: number;
}

export interface Comparison {
  a: string;
  b: string;
  tasks: number;
  /** Mean over tasks of Final(a) − Final(b). */
  meanDifference: number;
  ci95: [number, number];
  resamples: number;
  perTask: Array<{ taskId: number; a: number; b: number; difference: number }>;
}

export interface IterationCurve {
  arm: string;
  /** Per round: mean over tasks of the best-so-far evaluator Final and self-score. */
  rounds: Array<{ round: number; final: number; selfScore: number; tasks: number }>;
  /** Every scored draft: the agent's self-score against the evaluator's Final. */
  points: Array<{ taskId: number; repeat: number; draft: number; round: number; selfScore?: number; final?: number }>;
}

/** How well the self-check's score tracks the evaluator's Final over each task's pages (one per arm). */
export interface SelfCheckAgreement {
  track: "given";
  perTask: Array<{ taskId: number; pages: number; spearman: number | null; pairs: number; pairwiseAgreement: number | null }>;
  /** Means over the tasks where each is defined. */
  meanSpearman: number | null;
  meanPairwise: number | null;
  points: Array<{ arm: string; taskId: number; selfScore: number; final: number }>;
}

/** An oracle-feedback agent arm beside the usual agent and the single pass (see the module comment). */
export interface FeedbackBound {
  label: string;
  arms: { oracle: string; selfCheck?: string; singlePass?: string };
  /** Final per task (a task's repeats averaged first), for the tasks the oracle arm has. */
  perTask: Array<{ taskId: number; oracle: number; selfCheck?: number; singlePass?: number }>;
  /** Mean Final over the tasks each arm has (as in the arm table). */
  overall: { oracle: number; selfCheck?: number; singlePass?: number };
  /** Paired differences: oracle − self-check, self-check − single pass, oracle − single pass (those whose arms exist). */
  comparisons: Comparison[];
}

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
  byClass: { interaction: Record<string, Record<string, number>>; visual: Record<string, Record<string, number>> };
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

/** Per task, the mean over repeats of one score of an arm's cells. */
function perTask(cells: readonly CellScores[], arm: string, pick: (cell: CellScores) => number): Map<number, number> {
  const byTask = new Map<number, number[]>();
  for (const cell of cells) if (cell.arm === arm) byTask.set(cell.taskId, [...(byTask.get(cell.taskId) ?? []), pick(cell)]);
  return new Map([...byTask].map(([taskId, values]) => [taskId, mean(values)]));
}

/**
 * The score-by-iteration curve of an agent arm: per round, the best-so-far draft by self-score in each cell,
 * averaged per task (repeats first), then over tasks.
 */
export function iterationCurve(arm: string, records: readonly Pick<CellRecord, "arm" | "taskId" | "repeat" | "iterations">[]): IterationCurve | undefined {
  const mine = records.filter((record) => record.arm === arm && record.iterations.length > 0);
  if (mine.length === 0) return undefined;
  const points = mine.flatMap((record) =>
    record.iterations.map((entry) => ({
      taskId: record.taskId,
      repeat: record.repeat,
      draft: entry.draft,
      round: entry.round,
      ...(entry.selfScore !== undefined ? { selfScore: entry.selfScore } : {}),
      ...(entry.final !== undefined ? { final: entry.final } : {}),
    })),
  );
  const lastRound = Math.max(...points.map((point) => point.round));
  const rounds = [];
  for (let round = 0; round <= lastRound; round++) {
    // Best so far, per cell: what "keep the best" would have reached by this round, judged by each signal.
    const perCell = mine.map((record) => {
      const upTo = record.iterations.filter((entry) => entry.round <= round);
      const bySelf = [...upTo].sort((a, b) => (b.selfScore ?? 0) - (a.selfScore ?? 0))[0];
      return { taskId: record.taskId, final: bySelf?.final ?? 0, selfScore: bySelf?.selfScore ?? 0 };
    });
    // As every other number of the report: a task's repeats averaged first, then the tasks.
    const byTask = new Map<number, Array<{ final: number; selfScore: number }>>();
    for (const cell of perCell) byTask.set(cell.taskId, [...(byTask.get(cell.taskId) ?? []), cell]);
    const perTaskMeans = [...byTask.values()].map((cells) => ({
      final: mean(cells.map((cell) => cell.final)),
      selfScore: mean(cells.map((cell) => cell.selfScore)),
    }));
    rounds.push({
      round,
      final: mean(perTaskMeans.map((entry) => entry.final)),
      selfScore: mean(perTaskMeans.map((entry) => entry.selfScore)),
      tasks: perTaskMeans.length,
    });
  }
  return { arm, rounds, points };
}

function selfCheckAgreement(cells: readonly CellScores[]): SelfCheckAgreement | undefined {
  const checked = cells.filter((cell) => cell.repeat === 0 && cell.selfCheckScore !== undefined);
  if (checked.length === 0) return undefined;
  const taskIds = [...new Set(checked.map((cell) => cell.taskId))].sort((a, b) => a - b);
  const finite = (value: number) => (Number.isFinite(value) ? value : null);
  const perTask = taskIds.map((taskId) => {
    const pages = checked.filter((cell) => cell.taskId === taskId).map((cell) => ({ label: cell.arm, evaluator: cell.final, signal: cell.selfCheckScore! }));
    const tracking = trackingOf(pages);
    return { taskId, pages: tracking.pages, spearman: finite(tracking.spearman), pairs: tracking.pairs, pairwiseAgreement: finite(tracking.pairwiseAgreement) };
  });
  const meanOf = (values: Array<number | null>) => {
    const defined = values.filter((value): value is number => value !== null);
    return defined.length === 0 ? null : mean(defined);
  };
  return {
    track: "given",
    perTask,
    meanSpearman: meanOf(perTask.map((entry) => entry.spearman)),
    meanPairwise: meanOf(perTask.map((entry) => entry.pairwiseAgreement)),
    points: checked.map((cell) => ({ arm: cell.arm, taskId: cell.taskId, selfScore: cell.selfCheckScore!, final: cell.final })),
  };
}

/**
 * Per arm, from its cells: means over tasks (a task's repeats averaged first), the
 * intervals of Final and IFS, coverage, tokens, cost and time. The report and `iwr view`
 * both call it, so their tables agree.
 */
export function armSummaries(arms: ReadonlyArray<{ name: string; kind: string }>, cells: readonly CellScores[], resamples: number): ArmSummary[] {
  return arms.map((arm) => {
    const mine = cells.filter((cell) => cell.arm === arm.name);
    const taskMeans = (pick: (cell: CellScores) => number) => [...perTask(mine, arm.name, pick).values()];
    const taskMean = (pick: (cell: CellScores) => number) => mean(taskMeans(pick));
    const ifs = taskMean((cell) => cell.ifs);
    const vfs = taskMean((cell) => cell.vfs);
    return {
      name: arm.name,
      kind: arm.kind,
      tasks: new Set(mine.map((cell) => cell.taskId)).size,
      cells: mine.length,
      failed: mine.filter((cell) => cell.status === "failed").length,
      coverage: mine.length === 0 ? 0 : mine.filter((cell) => cell.hasPage).length / mine.length,
      successRate: taskMean((cell) => (cell.ifs >= 1 ? 1 : 0)),
      ifs,
      ci95: {
        final: bootstrapMeanInterval(
          taskMeans((cell) => cell.final),
          resamples,
        ),
        ifs: bootstrapMeanInterval(
          taskMeans((cell) => cell.ifs),
          resamples,
        ),
      },
      lfs: taskMean((cell) => cell.lfs),
      hfs: taskMean((cell) => cell.hfs),
      vfs,
      final: taskMean((cell) => cell.final),
      finalByAlpha: Object.fromEntries(ALPHAS.map((alpha) => [String(alpha), alpha * ifs + (1 - alpha) * vfs])),
      vfsAllCheckpoints: taskMean((cell) => cell.vfsAllCheckpoints),
      inputTokens: sum(mine.map((cell) => cell.inputTokens)),
      outputTokens: sum(mine.map((cell) => cell.outputTokens)),
      costUsd: sum(mine.map((cell) => cell.costUsd)),
      wallMs: sum(mine.map((cell) => cell.wallMs)),
    };
  });
}

/** Each arm's mean Final per interaction class and per visual class (a task's repeats averaged first). */
export function classTables(
  arms: ReadonlyArray<{ name: string }>,
  cells: readonly CellScores[],
  taskById: ReadonlyMap<number, { meta: { interactionComplexity: string; visualComplexity: string } }>,
): ReportData["byClass"] {
  const classTable = (classOf: (meta: { interactionComplexity: string; visualComplexity: string }) => string) => {
    const table: Record<string, Record<string, number>> = {};
    for (const arm of arms) {
      const finals = perTask(cells, arm.name, (cell) => cell.final);
      const byClass = new Map<string, number[]>();
      for (const [taskId, final] of finals) {
        const task = taskById.get(taskId);
        if (task) byClass.set(classOf(task.meta), [...(byClass.get(classOf(task.meta)) ?? []), final]);
      }
      for (const [name, values] of byClass) {
        table[name] ??= {};
        table[name][arm.name] = mean(values);
      }
    }
    return Object.fromEntries(Object.entries(table).sort(([a], [b]) => a.localeCompare(b)));
  };
  return { interaction: classTable((meta) => meta.interactionComplexity), visual: classTable((meta) => meta.visualComplexity) };
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

/** The paired per-task difference in Final between two arms, with its bootstrap interval. */
function pairedComparison(cells: readonly CellScores[], a: string, b: string, resamples: number): Comparison {
  const finalsA = perTask(cells, a, (cell) => cell.final);
  const finalsB = perTask(cells, b, (cell) => cell.final);
  const shared = [...finalsA.keys()].filter((taskId) => finalsB.has(taskId)).sort((x, y) => x - y);
  const rows = shared.map((taskId) => ({
    taskId,
    a: finalsA.get(taskId)!,
    b: finalsB.get(taskId)!,
    difference: finalsA.get(taskId)! - finalsB.get(taskId)!,
  }));
  const differences = rows.map((row) => row.difference);
  return { a, b, tasks: rows.length, meanDifference: mean(differences), ci95: bootstrapMeanInterval(differences, resamples), resamples, perTask: rows };
}

/** An arm as the report reads it from run.json: its kind as shown, and what the feedback bound needs. */
export interface ReportArm {
  name: string;
  /** As shown (an oracle-feedback agent says so: armKindLabel). */
  kind: string;
  /** single-pass and agent arms: which generator, and for agents which feedback. */
  generator?: "single-pass" | "agent";
  feedback?: AgentFeedbackKind;
  model?: string;
}

function feedbackBounds(arms: readonly ReportArm[], cells: readonly CellScores[], resamples: number): FeedbackBound[] {
  const oracles = arms.filter((arm) => arm.generator === "agent" && arm.feedback === "oracle");
  // The partner of the same model when there is one, else the first of its kind.
  const partner = (oracle: ReportArm, pick: (arm: ReportArm) => boolean) => arms.find((arm) => pick(arm) && arm.model === oracle.model) ?? arms.find(pick);
  return oracles.map((oracle) => {
    const selfCheck = partner(oracle, (arm) => arm.generator === "agent" && arm.feedback !== "oracle");
    const singlePass = partner(oracle, (arm) => arm.generator === "single-pass");
    const finals = (arm: ReportArm | undefined) => (arm ? perTask(cells, arm.name, (cell) => cell.final) : undefined);
    const [oracleFinals, selfFinals, singleFinals] = [finals(oracle)!, finals(selfCheck), finals(singlePass)];
    const overall = (values: Map<number, number> | undefined) => (values ? mean([...values.values()]) : undefined);
    const comparisons = [
      selfCheck ? pairedComparison(cells, oracle.name, selfCheck.name, resamples) : undefined,
      selfCheck && singlePass ? pairedComparison(cells, selfCheck.name, singlePass.name, resamples) : undefined,
      singlePass ? pairedComparison(cells, oracle.name, singlePass.name, resamples) : undefined,
    ].filter((entry): entry is Comparison => entry !== undefined);
    const selfOverall = overall(selfFinals);
    const singleOverall = overall(singleFinals);
    return {
      label: ORACLE_FEEDBACK_LABEL,
      arms: { oracle: oracle.name, ...(selfCheck ? { selfCheck: selfCheck.name } : {}), ...(singlePass ? { singlePass: singlePass.name } : {}) },
      perTask: [...oracleFinals.keys()]
        .sort((a, b) => a - b)
        .map((taskId) => {
          const [self, single] = [selfFinals?.get(taskId), singleFinals?.get(taskId)];
          return {
            taskId,
            oracle: oracleFinals.get(taskId)!,
            ...(self !== undefined ? { selfCheck: self } : {}),
            ...(single !== undefined ? { singlePass: single } : {}),
          };
        }),
      overall: {
        oracle: overall(oracleFinals)!,
        ...(selfOverall !== undefined ? { selfCheck: selfOverall } : {}),
        ...(singleOverall !== undefined ? { singlePass: singleOverall } : {}),
      },
      comparisons,
    };
  });
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
