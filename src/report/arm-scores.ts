/**
 * An experiment's arms scored side by side, from their cells: per arm the means over
 * tasks (a task's repeats averaged first) with bootstrap intervals, Final under other
 * weightings, tokens, cost and time; each arm's mean Final per interaction and visual
 * class; and the paired per-task difference in Final between two arms. The report and
 * `iwr view` both build their tables here, so they agree.
 */
import type { CellScores } from "./cell-scores.ts";
import { bootstrapMeanInterval, mean, sum } from "./statistics.ts";

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

/** Each arm's mean Final, per interaction class and per visual class: class → arm → Final. */
export interface ClassTables {
  interaction: Record<string, Record<string, number>>;
  visual: Record<string, Record<string, number>>;
}

/** Per task, the mean over repeats of one score of an arm's cells. */
export function perTask(cells: readonly CellScores[], arm: string, pick: (cell: CellScores) => number): Map<number, number> {
  const byTask = new Map<number, number[]>();
  for (const cell of cells) if (cell.arm === arm) byTask.set(cell.taskId, [...(byTask.get(cell.taskId) ?? []), pick(cell)]);
  return new Map([...byTask].map(([taskId, values]) => [taskId, mean(values)]));
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
): ClassTables {
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

/** The paired per-task difference in Final between two arms, with its bootstrap interval. */
export function pairedComparison(cells: readonly CellScores[], a: string, b: string, resamples: number): Comparison {
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
