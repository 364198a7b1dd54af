/**
 * The report's parts about agents and their feedback: the score-by-iteration curve of an
 * agent arm (the evaluator's Final of each saved draft by round, never fed back to the
 * agent, beside the agent's self-score), how well the self-check's score orders each
 * task's pages as the evaluator does, and the oracle-feedback bound: an agent told the
 * evaluator's verdicts set beside the usual agent and the single pass of the same model.
 */
import type { CellRecord } from "../results/cell-record.ts";
import { type AgentFeedbackKind, ORACLE_FEEDBACK_LABEL } from "../results/tracks.ts";
import { trackingOf } from "../selfcheck/tracking.ts";
import { type Comparison, pairedComparison, perTask } from "./arm-scores.ts";
import type { CellScores } from "./cell-scores.ts";
import { mean } from "./statistics.ts";

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

export function selfCheckAgreement(cells: readonly CellScores[]): SelfCheckAgreement | undefined {
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

export function feedbackBounds(arms: readonly ReportArm[], cells: readonly CellScores[], resamples: number): FeedbackBound[] {
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
