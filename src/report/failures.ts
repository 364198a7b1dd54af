/**
 * Why cells failed, read from their records: each cell's first failing step and its kind,
 * and across cells the failure summary of report.json, report.md, report.html and
 * `iwr view` (why steps failed, which actions fail most, which tasks no arm passes).
 *
 * A cell's first failing step is the action at success_step (the first one that did not
 * pass). Its kind is decided from structured fields of eval.json and replay.json, never
 * from the wording of a task, in this order:
 *
 *   no-page           the generator made no page (or the evaluator found none to open);
 *   not-evaluated     the evaluator left no eval.json (its error is the cell's);
 *   judge-no          the action ran, and the judge answered No to its assertion;
 *   judge-error       the action ran, and the judge gave no usable answer (recorded "Error");
 *   timeout           the action did not complete: the page was torn down for a timeout, or
 *                     the step used up the protocol's action time limit;
 *   page-error        the page itself broke down: it did not load, crashed, ran out of
 *                     memory, left its own server, or the replay stopped with no step to blame;
 *   grounding-failed  the action's target could not be found: grounding named no element
 *                     (or no key), or an element that is not on the page;
 *   action-failed     the target was found but the action failed or had no effect (a scroll
 *                     that did not move, a click that threw).
 */
import fs from "node:fs";
import { z } from "zod";
import type { EvalRecord } from "../evaluator/eval-record.ts";
import { PROTOCOL } from "../protocol.ts";
import { mean } from "./statistics.ts";

export const FAILURE_KINDS = ["grounding-failed", "judge-no", "judge-error", "action-failed", "timeout", "page-error", "no-page", "not-evaluated"] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export const FAILURE_KIND_LABELS: Readonly<Record<FailureKind, string>> = {
  "grounding-failed": "grounding failed",
  "judge-no": "judge No",
  "judge-error": "judge gave no answer",
  "action-failed": "action failed",
  timeout: "timeout",
  "page-error": "page error",
  "no-page": "no page",
  "not-evaluated": "not evaluated",
};

/** The first step of a cell that did not pass, and why. */
export interface FirstFailure {
  /** 0-based action index; null when no action was reached (no page, not evaluated, page never loaded). */
  step: number | null;
  actionType?: string;
  kind: FailureKind;
  /** The record's own words: the judge's reason, the replay's reason, the error message (shortened). */
  detail: string;
}

const ErrorLike = z.looseObject({ code: z.string(), message: z.string() });

/** The part of replay.json the classification reads (loose: a newer record with more fields still reads). */
const ReplayDigestSchema = z.looseObject({
  steps: z
    .array(
      z.looseObject({
        index: z.number(),
        type: z.string().optional(),
        ok: z.boolean(),
        reason: z.string().optional(),
        grounding: z.looseObject({ index: z.number(), reason: z.string().optional() }).optional(),
        target: z.unknown().optional(),
        durationMs: z.number().optional(),
      }),
    )
    .default([]),
  loadError: ErrorLike.optional(),
  tornDown: ErrorLike.optional(),
  stopReason: ErrorLike.optional(),
  incidentCounts: z.record(z.string(), z.number()).optional(),
});
export type ReplayDigest = z.infer<typeof ReplayDigestSchema>;

/** replay.json's steps and page errors, or undefined when it is absent or unreadable. */
export function readReplayDigest(file: string): ReplayDigest | undefined {
  try {
    const parsed = ReplayDigestSchema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const DETAIL_CHARS = 240;
const shorten = (text: string) => (text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS - 1)}…` : text);

/** Codes of a page that broke down (src/errors.ts) rather than an action that failed on it. */
const PAGE_BROKE = new Set(["PAGE_CRASHED", "PAGE_HOSTILE", "PAGE_MEMORY", "BROWSER"]);

export interface FailureInput {
  /** Whether the generator made a page (cell.json's produced.status). */
  pageMade: boolean;
  /** The cell's error, when it has one ("stage: code: message"). */
  cellError?: string;
  evaluation?: EvalRecord;
  replay?: ReplayDigest;
  /** The task's action types in order (names the failing action). */
  actionTypes: readonly string[];
}

/** The cell's first failing step, or undefined when every step passed. */
export function firstFailure(input: FailureInput): FirstFailure | undefined {
  const { evaluation, replay } = input;
  if (!input.pageMade || evaluation?.stopReason?.code === "CANDIDATE_MISSING") {
    return { step: null, kind: "no-page", detail: shorten(input.cellError ?? evaluation?.stopReason?.message ?? "the generator made no page") };
  }
  if (!evaluation) return { step: null, kind: "not-evaluated", detail: shorten(input.cellError ?? "no eval.json") };
  const step = evaluation.successStep;
  if (step >= evaluation.totalSteps) return undefined;
  const actionType = input.actionTypes[step];
  const at = (kind: FailureKind, detail: string, index: number | null = step): FirstFailure => ({
    step: index,
    ...(index !== null && actionType ? { actionType } : {}),
    kind,
    detail: shorten(detail),
  });
  if (step < evaluation.executedSteps) {
    const assertion = evaluation.assertions.find((entry) => entry.actionIndex === step);
    const reason = assertion?.think ?? assertion?.reply ?? "";
    if (assertion?.result === "Error") return at("judge-error", reason || "the judge gave no usable answer");
    return at("judge-no", reason ? `judge No: ${reason}` : "judge No");
  }
  // The action at success_step did not complete: the replay says why.
  const pageProblem = replay?.tornDown ?? replay?.loadError;
  const failed = replay?.steps.find((entry) => entry.index === step && !entry.ok);
  const stop = evaluation.stopReason;
  // The action the failure belongs to; none when the page never loaded (the replay has no step at all).
  const where = replay?.loadError || replay?.steps.length === 0 ? null : step;
  if (pageProblem?.code === "PAGE_TIMEOUT" || stop?.code === "PAGE_TIMEOUT" || (failed?.durationMs ?? 0) >= PROTOCOL.actionTimeoutMs) {
    return at("timeout", failed?.reason ?? pageProblem?.message ?? stop?.message ?? "timeout", where);
  }
  if (pageProblem || (stop && PAGE_BROKE.has(stop.code))) return at("page-error", pageProblem?.message ?? stop?.message ?? "the page broke down", where);
  if (!failed) {
    // No step to blame: the page never reached a first screenshot, or the replay record is missing.
    if (!replay && stop?.code === "ACTION_FAILED") return at("action-failed", stop.message);
    return at("page-error", stop?.message ?? "the replay stopped before this action", where);
  }
  const grounded = failed.grounding === undefined || (failed.grounding.index >= 0 && (failed.target !== undefined || !needsTarget(failed.type)));
  if (!grounded) return at("grounding-failed", failed.reason ?? failed.grounding?.reason ?? "grounding found no element");
  return at("action-failed", failed.reason ?? stop?.message ?? "the action failed");
}

/** Click and Type act on an element; Press and Scroll do not (a Press's grounding names a key). */
const needsTarget = (type: string | undefined) => type === "Click" || type === "Type";

// ---- the summary across cells --------------------------------------------------------

/** What the summary reads of a cell (CellScores has all of it). */
export interface FailureCell {
  arm: string;
  repeat: number;
  taskId: number;
  ifs: number;
  final: number;
  failure?: FirstFailure;
}

export interface FailureTask {
  id: number;
  site: string;
  interaction: string;
  visual: string;
  /** The task's action types in order. */
  actionTypes: readonly string[];
}

export interface FailureSummary {
  /** Cells counted, and those whose every step passed. */
  cells: number;
  passed: number;
  /** Why the first failing step failed, by kind, over all cells (and per arm). */
  byKind: Array<{ kind: FailureKind; label: string; cells: number; share: number; byArm: Record<string, number> }>;
  /**
   * Per action type × the task's interaction class: how often an action of that type was
   * reached in a replay, and how often it was the first failing step (most failures first).
   */
  byAction: Array<{
    actionType: string;
    interaction: string;
    reached: number;
    failed: number;
    failureRate: number;
    byKind: Partial<Record<FailureKind, number>>;
  }>;
  /** Tasks that no cell of any arm passed (IFS = 1 in no repeat). */
  unpassedTasks: Array<{ taskId: number; site: string; interaction: string; visual: string; cells: number; bestFinal: number; bestArm: string; kinds: string }>;
  /** Tasks that only calibration arms (built from the true page) passed; present when the run has other arms. */
  passedOnlyByCalibration?: Array<{ taskId: number; arms: string[] }>;
}

/**
 * Calibration arms are built from the task's own page (the reference, an empty page, mutants):
 * the same kinds as isCalibrationArm in src/experiment/config.ts, which a library may not import.
 */
export function isCalibrationKind(kind: string): boolean {
  return kind === "reference" || kind === "blank" || kind.startsWith("mutant:") || kind === "mutant";
}

export function failureSummary(
  cells: readonly FailureCell[],
  tasks: readonly FailureTask[],
  arms: ReadonlyArray<{ name: string; kind: string }>,
): FailureSummary {
  const taskById = new Map(tasks.map((task) => [task.id, task]));
  const failing = cells.filter((cell) => cell.failure);
  const byKind = FAILURE_KINDS.flatMap((kind) => {
    const mine = failing.filter((cell) => cell.failure!.kind === kind);
    if (mine.length === 0) return [];
    const byArm: Record<string, number> = {};
    for (const cell of mine) byArm[cell.arm] = (byArm[cell.arm] ?? 0) + 1;
    return [{ kind, label: FAILURE_KIND_LABELS[kind], cells: mine.length, share: mine.length / Math.max(1, failing.length), byArm }];
  }).sort((a, b) => b.cells - a.cells);

  const actions = new Map<string, FailureSummary["byAction"][number]>();
  const entry = (actionType: string, interaction: string) => {
    const key = `${actionType}\u0000${interaction}`;
    let found = actions.get(key);
    if (!found) {
      found = { actionType, interaction, reached: 0, failed: 0, failureRate: 0, byKind: {} };
      actions.set(key, found);
    }
    return found;
  };
  for (const cell of cells) {
    const task = taskById.get(cell.taskId);
    if (!task) continue;
    const failedAt = cell.failure ? cell.failure.step : undefined;
    // No action reached (no page, not evaluated, a page that never loaded): nothing to count per action.
    if (failedAt === null) continue;
    const lastReached = failedAt ?? task.actionTypes.length - 1;
    for (let index = 0; index <= lastReached && index < task.actionTypes.length; index++) entry(task.actionTypes[index]!, task.interaction).reached++;
    if (failedAt !== undefined && task.actionTypes[failedAt]) {
      const row = entry(task.actionTypes[failedAt]!, task.interaction);
      row.failed++;
      row.byKind[cell.failure!.kind] = (row.byKind[cell.failure!.kind] ?? 0) + 1;
    }
  }
  const byAction = [...actions.values()]
    .map((row) => ({ ...row, failureRate: row.reached === 0 ? 0 : row.failed / row.reached }))
    .sort(
      (a, b) => b.failed - a.failed || b.failureRate - a.failureRate || a.actionType.localeCompare(b.actionType) || a.interaction.localeCompare(b.interaction),
    );

  const calibration = new Set(arms.filter((arm) => isCalibrationKind(arm.kind)).map((arm) => arm.name));
  const taskIds = [...new Set(cells.map((cell) => cell.taskId))].sort((a, b) => a - b);
  const unpassedTasks: FailureSummary["unpassedTasks"] = [];
  const passedOnlyByCalibration: NonNullable<FailureSummary["passedOnlyByCalibration"]> = [];
  for (const taskId of taskIds) {
    const mine = cells.filter((cell) => cell.taskId === taskId);
    const passingArms = [...new Set(mine.filter((cell) => cell.ifs >= 1).map((cell) => cell.arm))];
    if (passingArms.length === 0) {
      // Best arm by its mean Final over repeats.
      const byArm = new Map<string, number[]>();
      for (const cell of mine) byArm.set(cell.arm, [...(byArm.get(cell.arm) ?? []), cell.final]);
      const [bestArm, bestFinal] = [...byArm].map(([arm, finals]) => [arm, mean(finals)] as const).sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
      const kinds = new Map<string, number>();
      for (const cell of mine)
        if (cell.failure) kinds.set(FAILURE_KIND_LABELS[cell.failure.kind], (kinds.get(FAILURE_KIND_LABELS[cell.failure.kind]) ?? 0) + 1);
      const task = taskById.get(taskId);
      unpassedTasks.push({
        taskId,
        site: task?.site ?? "unknown",
        interaction: task?.interaction ?? "unknown",
        visual: task?.visual ?? "unknown",
        cells: mine.length,
        bestFinal,
        bestArm,
        kinds: [...kinds]
          .sort((a, b) => b[1] - a[1])
          .map(([label, count]) => `${label} ×${count}`)
          .join(", "),
      });
    } else if (passingArms.every((arm) => calibration.has(arm))) {
      passedOnlyByCalibration.push({ taskId, arms: passingArms });
    }
  }
  const hasOtherArms = arms.some((arm) => !calibration.has(arm.name));
  return {
    cells: cells.length,
    passed: cells.length - failing.length,
    byKind,
    byAction,
    unpassedTasks,
    ...(hasOtherArms ? { passedOnlyByCalibration } : {}),
  };
}
