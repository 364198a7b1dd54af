/**
 * Calibration candidates: for a task, the true page post-processed exactly like a
 * model's answer (`reference`, the ceiling) and an empty page (`blank`, the floor).
 * Evaluating both with the offline judge and grounding shows whether the evaluator
 * can give a perfect page full marks and an empty one nothing; `npm run calibrate`
 * and `npm run bench:evaluator` build on this.
 */

import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";
import { createEvaluator } from "../evaluator/create-evaluator.ts";
import type { EvalRecord } from "../evaluator/eval-record.ts";
import { evaluateTask, type TaskEvaluation } from "../evaluator/evaluate-task.ts";
import type { PairingMode } from "../evaluator/settings.ts";
import { runPipelined, trajectoryLength } from "../evaluator/task-pipeline.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { assetsBasePath, extractPageFromReply } from "../generation/page-from-reply.ts";
import { mutantDir, writeMutant } from "../mutants/ladder.ts";
import { type MutantSpec, mutantLabel } from "../mutants/operators.ts";
import { factsProbe, type PageFacts } from "../mutants/oracle.ts";
import type { ProtocolProfile } from "../protocol.ts";
import { candidateDirNamed, candidateFiles } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";
import { CALIBRATION_TARGETS } from "./targets.ts";

export const CALIBRATION_CANDIDATES = ["reference", "blank"] as const;
export type CalibrationCandidate = (typeof CALIBRATION_CANDIDATES)[number];

/** The recorder's reference page, `<task>/reference/index.html` (placeholder links in it). */
export function referencePagePath(task: Task): string {
  return path.join(task.dir, "reference", "index.html");
}

export const BLANK_PAGE = '<!doctype html>\n<html><head><meta charset="utf-8"><title>blank</title></head><body></body></html>\n';

/**
 * The task's true page as a candidate in `candidateDir`: the same post-processing a
 * model's reply gets (iframes out, placeholder → the relative path to the task's assets).
 */
export function referencePageHtml(task: Task, candidateDir: string): string {
  const source = referencePagePath(task);
  if (!fs.existsSync(source)) {
    throw new IwrError("TASK_INVALID", `task ${task.id}: no reference page at ${source} (record the suite with npm run tasks:build)`);
  }
  return extractPageFromReply(fs.readFileSync(source, "utf8"), assetsBasePath(candidateDir, task.inputs.assetsDir));
}

/**
 * Copies the site's files the recorder kept beside the reference page (everything in
 * `reference/` but index.html: stylesheets, scripts, fonts, data) into a candidate
 * folder whose page is built from it, so it is served exactly as the site was.
 * Bundled tasks are single files and have none.
 */
export function stageReferenceSiteFiles(task: Task, candidateDir: string): void {
  const referenceDir = path.dirname(referencePagePath(task));
  if (!fs.existsSync(referenceDir)) return;
  fs.mkdirSync(candidateDir, { recursive: true });
  for (const name of fs.readdirSync(referenceDir)) {
    if (name === "index.html") continue;
    fs.cpSync(path.join(referenceDir, name), path.join(candidateDir, name), { recursive: true });
  }
}

/** Writes `<resultDir>/<id>/<candidate>/index.html` (with the reference's site files for `reference`) and returns that folder. */
export function writeCalibrationCandidate(task: Task, resultDir: string, candidate: CalibrationCandidate): string {
  const candidateDir = candidateDirNamed(resultDir, task.id, candidate);
  fs.mkdirSync(candidateDir, { recursive: true });
  if (candidate === "reference") stageReferenceSiteFiles(task, candidateDir);
  const html = candidate === "reference" ? referencePageHtml(task, candidateDir) : BLANK_PAGE;
  writeFileAtomicSync(candidateFiles(candidateDir).page, html);
  return candidateDir;
}

/** One evaluated calibration candidate: the true page, the blank one, or a mutant of the true page. */
export interface CalibrationRow {
  task: Task;
  /** "reference", "blank", or the mutant's label ("freeze-after:2", "no-script"). */
  candidate: string;
  spec?: MutantSpec;
  evaluation: TaskEvaluation;
  /** What the page's DOM showed after each evalpoint (the oracle of what a mutant deserves). */
  facts: PageFacts[];
  candidateDir: string;
}

export interface CalibrationOptions {
  tasks: readonly Task[];
  resultDir: string;
  workers: number;
  /** Mutants of each task's true page to add (default none): see mutantLadder. */
  mutants?: (task: Task) => readonly MutantSpec[];
  /** Pairings to score under (default CALIBRATION_MODES: both). */
  pairingModes?: readonly PairingMode[];
  /** Called as each candidate finishes (progress display). */
  onRow?: (row: CalibrationRow) => void;
  /** The protocol profile of the replay and scoring rules (default corrected). */
  profile?: ProtocolProfile;
}

export const CALIBRATION_MODES: readonly PairingMode[] = ["aligned", "official"];

interface CalibrationRun {
  task: Task;
  candidate: string;
  spec?: MutantSpec;
  write: () => string;
}

/** Evaluates `reference`, `blank` and the mutants of every task with the offline judge and grounding, under both pairings. */
export async function runCalibration(options: CalibrationOptions): Promise<CalibrationRow[]> {
  const evaluator = await createEvaluator({ profile: options.profile ?? "corrected", judge: "heuristic", grounding: "heuristic", workers: options.workers });
  const rows: CalibrationRow[] = [];
  const runs: CalibrationRun[] = options.tasks.flatMap((task) => [
    ...CALIBRATION_CANDIDATES.map((candidate) => ({ task, candidate, write: () => writeCalibrationCandidate(task, options.resultDir, candidate) })),
    ...(options.mutants?.(task) ?? []).map((spec) => ({
      task,
      candidate: mutantLabel(spec),
      spec,
      write: () => {
        const dir = mutantDir(options.resultDir, task.id, spec);
        stageReferenceSiteFiles(task, dir);
        return writeMutant(dir, referencePageHtml(task, dir), spec, `reference page of task ${task.id}`);
      },
    })),
  ]);
  try {
    await runPipelined(runs, { workers: options.workers, weight: (run) => trajectoryLength(run.task) }, async ({ task, candidate, spec, write }) => {
      const candidateDir = write();
      const facts: PageFacts[] = [];
      const evaluation = await evaluateTask({
        task,
        candidateDir,
        model: candidate,
        pairingModes: options.pairingModes ?? CALIBRATION_MODES,
        evaluator,
        replace: true,
        probe: factsProbe(facts),
        calibration: true,
      });
      const row: CalibrationRow = { task, candidate, ...(spec ? { spec } : {}), evaluation, facts, candidateDir };
      rows.push(row);
      options.onRow?.(row);
    });
  } finally {
    await evaluator.close?.();
  }
  return rows;
}

/** A calibration row's record under one pairing mode. */
export function recordOf(row: CalibrationRow | undefined, mode: PairingMode): EvalRecord | undefined {
  return row?.evaluation.records.find((entry) => entry.mode === mode)?.record;
}

export function scoresOf(rows: readonly CalibrationRow[], task: Task, candidate: string, mode: PairingMode) {
  return recordOf(
    rows.find((entry) => entry.task.id === task.id && entry.candidate === candidate),
    mode,
  )?.scores;
}

const pct = (value: number): string => (value * 100).toFixed(2);
const mean = (values: number[]): number => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);

/** A markdown table: per task the reference and blank scores under both pairings, then the means. */
export function calibrationTable(tasks: readonly Task[], rows: readonly CalibrationRow[]): string {
  const cell = (task: Task, candidate: CalibrationCandidate, mode: PairingMode, key: "ifs" | "final") => scoresOf(rows, task, candidate, mode)?.[key] ?? 0;
  const lines = [
    "| task | site | steps | ref IFS | ref Final aligned | ref Final official | blank IFS | blank Final aligned | blank Final official |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const task of tasks) {
    lines.push(
      `| ${task.id} | ${task.meta.sourceWebsite} | ${task.truth.actions.length} | ` +
        `${pct(cell(task, "reference", "aligned", "ifs"))} | ${pct(cell(task, "reference", "aligned", "final"))} | ` +
        `${pct(cell(task, "reference", "official", "final"))} | ${pct(cell(task, "blank", "aligned", "ifs"))} | ` +
        `${pct(cell(task, "blank", "aligned", "final"))} | ${pct(cell(task, "blank", "official", "final"))} |`,
    );
  }
  const column = (candidate: CalibrationCandidate, mode: PairingMode, key: "ifs" | "final") => pct(mean(tasks.map((task) => cell(task, candidate, mode, key))));
  lines.push(
    `| mean | | | ${column("reference", "aligned", "ifs")} | ${column("reference", "aligned", "final")} | ` +
      `${column("reference", "official", "final")} | ${column("blank", "aligned", "ifs")} | ` +
      `${column("blank", "aligned", "final")} | ${column("blank", "official", "final")} |`,
  );
  return lines.join("\n");
}

/** Why a reference lost steps: the failed action, and each assertion the judge said No to. */
export function explainLostSteps(row: CalibrationRow): string[] {
  const lines: string[] = [];
  const replay = row.evaluation.replay;
  if (replay.stopReason) lines.push(`  stopped: ${replay.stopReason.message}`);
  for (const outcome of replay.assertions) {
    if (outcome.verdict.result === "Yes") continue;
    lines.push(`  action ${outcome.actionIndex} assertion "${outcome.assertion}": No — ${outcome.verdict.think ?? outcome.verdict.failure?.message ?? ""}`);
    const ocr = outcome.verdict.evidence?.ocrText;
    if (ocr) lines.push(`    OCR read: ${ocr.slice(0, 300)}`);
  }
  return lines;
}

/** Every missed calibration target, explained; empty when all are met. */
export function calibrationProblems(tasks: readonly Task[], rows: readonly CalibrationRow[]): string[] {
  const problems: string[] = [];
  for (const task of tasks) {
    const row = rows.find((entry) => entry.task.id === task.id && entry.candidate === "reference");
    const aligned = recordOf(row, "aligned");
    const referenceIfs = aligned?.scores.ifs ?? 0;
    if (referenceIfs < 1) {
      problems.push(`reference of task ${task.id} reached IFS ${pct(referenceIfs)} %:`);
      if (row) problems.push(...explainLostSteps(row));
    }
    if (aligned && aligned.scores.final < CALIBRATION_TARGETS.referenceFinalMin) problems.push(referenceBelowFloor(task, aligned));
    if ((scoresOf(rows, task, "blank", "aligned")?.ifs ?? 1) > 0) problems.push(`blank page of task ${task.id} reached IFS > 0`);
  }
  const blankFinal = mean(tasks.map((task) => scoresOf(rows, task, "blank", "aligned")?.final ?? 0));
  if (blankFinal > CALIBRATION_TARGETS.blankFinalMax) problems.push(`blank mean Final (aligned) above ${pct(CALIBRATION_TARGETS.blankFinalMax)} %`);
  return problems;
}

/** A true page under the Final floor, with the marks it got against its own checkpoints (MLLM on its 0–100 scale). */
function referenceBelowFloor(task: Task, record: EvalRecord): string {
  const { final, ocrMean, dinoMean, mllmMean } = record.scores;
  return (
    `reference of task ${task.id} reached Final ${pct(final)} % (aligned), below ${pct(CALIBRATION_TARGETS.referenceFinalMin)} %: ` +
    `against its own checkpoints OCR ${pct(ocrMean)} %, ${record.settings.visualMetric} ${pct(dinoMean)} %, MLLM ${mllmMean.toFixed(1)}/100`
  );
}
