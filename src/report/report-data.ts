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
 */
import fs from "node:fs";
import path from "node:path";
import { readEvalRecord, type EvalRecord } from "../evaluator/eval-record.ts";
import { EVALUATOR_SETTINGS } from "../evaluator/settings.ts";
import { RESULT_FILES } from "../results/layout.ts";
import { trackingOf } from "../selfcheck/tracking.ts";
import type { Task } from "../tasks/schema.ts";
import type { CellRecord } from "../results/cell-record.ts";

export const REPORT_VERSION = 1;
export const ALPHAS = [0.5, 0.7, 0.9] as const;

export interface StepRow {
  position: number;
  actionIndex: number | null;
  checkpointPath: string;
  evalpointPath: string;
  ocr: number;
  dino: number;
  mllm: number;
  /** The judge's verdict on the step's assertion, when it had one. */
  verdict?: "Yes" | "No";
}

export interface CellScores {
  arm: string;
  repeat: number;
  taskId: number;
  status: CellRecord["status"];
  error?: string;
  hasPage: boolean;
  ifs: number;
  lfs: number;
  hfs: number;
  vfs: number;
  final: number;
  /** VFS with unreached checkpoints counted as 0 (our extra). */
  vfsAllCheckpoints: number;
  tokens: number;
  costUsd: number;
  wallMs: number;
  selfScore?: number;
  /** The self-check's score of the page (given track), when the experiment ran it. */
  selfCheckScore?: number;
  steps: StepRow[];
  /** Checkpoints the task has (the denominator of vfsAllCheckpoints). */
  checkpoints: number;
  /** With judge repeats: judged steps, those whose judgements disagreed, and the SD of IFS over the repeats. */
  judge?: { repeats: number; judgedSteps: number; disagreeing: number; ifsSd: number };
}

export interface ArmSummary {
  name: string;
  kind: string;
  tasks: number;
  cells: number;
  failed: number;
  coverage: number;
  successRate: number;
  ifs: number;
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
  tasks: Array<{ id: number; site: string; interaction: string; visual: string; checkpointPaths: string[] }>;
  cells: CellScores[];
  byClass: { interaction: Record<string, Record<string, number>>; visual: Record<string, Record<string, number>> };
  comparison?: Comparison;
  curves: IterationCurve[];
  selfCheck?: SelfCheckAgreement;
  judgeNoise?: JudgeNoise;
  notes: string[];
}

const mean = (values: readonly number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

function readEval(dir: string): EvalRecord | undefined {
  const file = path.join(dir, RESULT_FILES.eval);
  if (!fs.existsSync(file)) return undefined;
  try {
    return readEvalRecord(file);
  } catch {
    return undefined;
  }
}

/** One cell's scores from its eval.json (zeros when the evaluator left none). */
export function cellScores(record: CellRecord, dir: string, task: Task): CellScores {
  const evaluation = readEval(dir);
  const checkpoints = task.truth.checkpointPaths.length;
  const scores = evaluation?.scores;
  const lists = evaluation?.lists ?? { ocr: [], dino: [], mllm: [] };
  // Unreached checkpoints count as 0: the sums over reached steps divided by every checkpoint.
  const denominator = Math.max(1, checkpoints);
  const { weights } = EVALUATOR_SETTINGS.protocol;
  const lfsAll = (sum(lists.ocr) / denominator + sum(lists.dino) / denominator) / 2;
  const hfsAll = sum(lists.mllm) / 100 / denominator;
  const verdicts = new Map((evaluation?.assertions ?? []).map((assertion) => [assertion.actionIndex, assertion.result]));
  return {
    arm: record.arm,
    repeat: record.repeat,
    taskId: record.taskId,
    status: record.status,
    ...(record.error ? { error: `${record.error.stage}: ${record.error.code}: ${record.error.message}` } : {}),
    hasPage: record.produced.status === "made",
    ifs: scores?.ifs ?? 0,
    lfs: scores?.lfs ?? 0,
    hfs: scores?.hfs ?? 0,
    vfs: scores?.vfs ?? 0,
    final: scores?.final ?? 0,
    vfsAllCheckpoints: weights.lfsInVfs * lfsAll + weights.hfsInVfs * hfsAll,
    tokens: record.produced.usage.inputTokens + record.produced.usage.outputTokens,
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
    ...(evaluation ? judgeSpread(evaluation) : {}),
  };
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
    const failing = evaluation.assertions.filter((assertion) => assertion.actionIndex < evaluation.executedSteps && (assertion.repeats?.[repeat] ?? assertion.result) === "No");
    const success = failing.reduce((lowest, assertion) => Math.min(lowest, assertion.actionIndex), evaluation.executedSteps);
    return evaluation.totalSteps === 0 ? 0 : success / evaluation.totalSteps;
  };
  const values = Array.from({ length: repeats }, (_, repeat) => ifsOf(repeat));
  const average = mean(values);
  const ifsSd = Math.sqrt(values.reduce((sum, value) => sum + (value - average) ** 2, 0) / Math.max(1, values.length - 1));
  return { judge: { repeats, judgedSteps: repeated.length, disagreeing: repeated.filter((assertion) => new Set(assertion.repeats).size > 1).length, ifsSd } };
}

/** A small seeded generator (mulberry32): the same run gives the same interval. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Percentile bootstrap interval of the mean of `values` (resampling the tasks). */
export function bootstrapMeanInterval(values: readonly number[], resamples: number, seed = 1): [number, number] {
  if (values.length === 0) return [0, 0];
  const random = seededRandom(seed);
  const means: number[] = [];
  for (let index = 0; index < resamples; index++) {
    let total = 0;
    for (let draw = 0; draw < values.length; draw++) total += values[Math.floor(random() * values.length)]!;
    means.push(total / values.length);
  }
  means.sort((a, b) => a - b);
  const at = (q: number) => means[Math.min(means.length - 1, Math.max(0, Math.floor(q * means.length)))]!;
  return [at(0.025), at(0.975)];
}

/** Per task, the mean over repeats of one score of an arm's cells. */
function perTask(cells: readonly CellScores[], arm: string, pick: (cell: CellScores) => number): Map<number, number> {
  const byTask = new Map<number, number[]>();
  for (const cell of cells) if (cell.arm === arm) byTask.set(cell.taskId, [...(byTask.get(cell.taskId) ?? []), pick(cell)]);
  return new Map([...byTask].map(([taskId, values]) => [taskId, mean(values)]));
}

function curveOf(arm: string, records: readonly CellRecord[]): IterationCurve | undefined {
  const mine = records.filter((record) => record.arm === arm && record.iterations.length > 0);
  if (mine.length === 0) return undefined;
  const points = mine.flatMap((record) =>
    record.iterations.map((entry) => ({ taskId: record.taskId, repeat: record.repeat, draft: entry.draft, round: entry.round, ...(entry.selfScore !== undefined ? { selfScore: entry.selfScore } : {}), ...(entry.final !== undefined ? { final: entry.final } : {}) })),
  );
  const lastRound = Math.max(...points.map((point) => point.round));
  const rounds = [];
  for (let round = 0; round <= lastRound; round++) {
    // Best so far, per cell: what "keep the best" would have reached by this round, judged by each signal.
    const perCell = mine.map((record) => {
      const upTo = record.iterations.filter((entry) => entry.round <= round);
      const bySelf = [...upTo].sort((a, b) => (b.selfScore ?? 0) - (a.selfScore ?? 0))[0];
      return { final: bySelf?.final ?? 0, selfScore: bySelf?.selfScore ?? 0 };
    });
    rounds.push({ round, final: mean(perCell.map((entry) => entry.final)), selfScore: mean(perCell.map((entry) => entry.selfScore)), tasks: perCell.length });
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

export function buildReportData(input: {
  name: string;
  evaluator: Record<string, unknown>;
  arms: ReadonlyArray<{ name: string; kind: string }>;
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
  const arms: ArmSummary[] = input.arms.map((arm) => {
    const mine = cells.filter((cell) => cell.arm === arm.name);
    const taskMean = (pick: (cell: CellScores) => number) => mean([...perTask(cells, arm.name, pick).values()]);
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
      lfs: taskMean((cell) => cell.lfs),
      hfs: taskMean((cell) => cell.hfs),
      vfs,
      final: taskMean((cell) => cell.final),
      finalByAlpha: Object.fromEntries(ALPHAS.map((alpha) => [String(alpha), alpha * ifs + (1 - alpha) * vfs])),
      vfsAllCheckpoints: taskMean((cell) => cell.vfsAllCheckpoints),
      inputTokens: sum(input.records.filter(({ record }) => record.arm === arm.name).map(({ record }) => record.produced.usage.inputTokens)),
      outputTokens: sum(input.records.filter(({ record }) => record.arm === arm.name).map(({ record }) => record.produced.usage.outputTokens)),
      costUsd: sum(mine.map((cell) => cell.costUsd)),
      wallMs: sum(mine.map((cell) => cell.wallMs)),
    };
  });

  const classTable = (classOf: (task: Task) => string) => {
    const table: Record<string, Record<string, number>> = {};
    for (const arm of input.arms) {
      const finals = perTask(cells, arm.name, (cell) => cell.final);
      const byClass = new Map<string, number[]>();
      for (const [taskId, final] of finals) {
        const task = taskById.get(taskId);
        if (task) byClass.set(classOf(task), [...(byClass.get(classOf(task)) ?? []), final]);
      }
      for (const [name, values] of byClass) (table[name] ??= {})[arm.name] = mean(values);
    }
    return Object.fromEntries(Object.entries(table).sort(([a], [b]) => a.localeCompare(b)));
  };

  const pair = input.compare ?? (input.arms.length >= 2 ? [input.arms[0]!.name, input.arms[1]!.name] : undefined);
  let comparison: Comparison | undefined;
  if (pair) {
    const [a, b] = pair;
    const finalsA = perTask(cells, a, (cell) => cell.final);
    const finalsB = perTask(cells, b, (cell) => cell.final);
    const shared = [...finalsA.keys()].filter((taskId) => finalsB.has(taskId)).sort((x, y) => x - y);
    const rows = shared.map((taskId) => ({ taskId, a: finalsA.get(taskId)!, b: finalsB.get(taskId)!, difference: finalsA.get(taskId)! - finalsB.get(taskId)! }));
    const differences = rows.map((row) => row.difference);
    comparison = { a, b, tasks: rows.length, meanDifference: mean(differences), ci95: bootstrapMeanInterval(differences, input.resamples), resamples: input.resamples, perTask: rows };
  }

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
            return [{ arm: arm.name, judgedSteps: sum(mine.map((cell) => cell.judge!.judgedSteps)), disagreeing: sum(mine.map((cell) => cell.judge!.disagreeing)), meanIfsSd, finalSdFromJudge: EVALUATOR_SETTINGS.protocol.weights.ifs * meanIfsSd }];
          }),
        };
  const curves = input.arms.flatMap((arm) => curveOf(arm.name, records) ?? []);
  const usedTasks = input.tasks.filter((task) => cells.some((cell) => cell.taskId === task.id));
  return {
    version: REPORT_VERSION,
    name: input.name,
    createdAt: new Date().toISOString(),
    evaluator: input.evaluator,
    arms,
    tasks: usedTasks.map((task) => ({ id: task.id, site: task.meta.sourceWebsite, interaction: task.meta.interactionComplexity, visual: task.meta.visualComplexity, checkpointPaths: [...task.truth.checkpointPaths] })),
    cells,
    byClass: { interaction: classTable((task) => task.meta.interactionComplexity), visual: classTable((task) => task.meta.visualComplexity) },
    ...(comparison ? { comparison } : {}),
    curves,
    ...(selfCheck ? { selfCheck } : {}),
    ...(judgeNoise ? { judgeNoise } : {}),
    notes: [
      "Final, IFS, VFS: the benchmark's definitions (IWR-PROTOCOL.md §3.6), means over tasks (a task's repeats averaged first).",
      "success rate: share of tasks whose replay passed every step (IFS = 1); coverage: share of cells with a page.",
      "Final at α: α·IFS + (1 − α)·VFS; the benchmark's is α = 0.7.",
      "VFS (all checkpoints): our extra metric, unreached checkpoints counted as 0; the published VFS averages reached steps only.",
      "Interval: percentile bootstrap over tasks of the mean paired difference in Final (seeded).",
      "Judge noise (with judge repeats): per cell, IFS recomputed with each repeat's verdicts; its SD, times IFS's weight in Final (0.7), is the part of Final's spread the judge alone causes (visual scores are not re-judged).",
      "Self-check agreement (when run): per task, Spearman ρ and pairwise order agreement between the self-check's score and the evaluator's Final over the arms' pages; given track (the task's action descriptions replayed, never its checkpoints or assertions).",
    ],
  };
}
