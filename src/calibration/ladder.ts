/**
 * What the mutant ladder says about the evaluator (calibration with near misses):
 *
 * - agreement: on every judged step of every mutant (executed, with an assertion), does
 *   the offline judge's verdict equal the one the step deserves (mutants/oracle.ts, from
 *   the DOM, with the true page as ground truth)? Target: ≥ 90 % of those steps;
 * - every mutant scores below the true page on every task (aligned Final), except a
 *   mutant that renders exactly as the true page does (no-images on a page without
 *   images): it is the page itself, and says so;
 * - freeze-after:k is monotone in k: more gestures allowed never lowers the score.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type DeservedVerdict, deservedVerdicts } from "../mutants/oracle.ts";
import { candidateFiles } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";
import { type CalibrationRow, recordOf, scoresOf } from "./calibration.ts";

export const LADDER_TARGETS = Object.freeze({ agreementMin: 0.9 });

export interface JudgedStep {
  taskId: number;
  candidate: string;
  actionIndex: number;
  judge: "Yes" | "No" | "Error";
  deserved: DeservedVerdict;
}

export interface LadderAnalysis {
  judged: JudgedStep[];
  agreement: number;
  /** Mutants that render as the true page does, by task. */
  identical: Array<{ taskId: number; candidate: string }>;
  problems: string[];
  table: string;
}

function evalpointHashes(candidateDir: string): string[] {
  const dir = candidateFiles(candidateDir).evalpoints;
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))
    .map((name) =>
      createHash("sha256")
        .update(fs.readFileSync(path.join(dir, name)))
        .digest("hex"),
    );
}

const pct = (value: number) => (value * 100).toFixed(2);
const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);

export function analyseLadder(tasks: readonly Task[], rows: readonly CalibrationRow[]): LadderAnalysis {
  const judged: JudgedStep[] = [];
  const identical: LadderAnalysis["identical"] = [];
  const problems: string[] = [];
  for (const task of tasks) {
    const reference = rows.find((row) => row.task.id === task.id && row.candidate === "reference");
    if (!reference) continue;
    const referenceFinal = scoresOf(rows, task, "reference", "aligned")?.final ?? 0;
    const referenceShots = evalpointHashes(reference.candidateDir);
    const mutants = rows.filter((row) => row.task.id === task.id && row.spec);
    for (const row of mutants) {
      const spec = row.spec!;
      const record = recordOf(row, "aligned");
      if (!record) continue;
      const deserved = deservedVerdicts({ actions: task.truth.actions, spec, reference: reference.facts, mutant: row.facts, executed: record.executedSteps });
      for (const assertion of record.assertions) {
        const verdict = deserved[assertion.actionIndex];
        if (verdict) judged.push({ taskId: task.id, candidate: row.candidate, actionIndex: assertion.actionIndex, judge: assertion.result, deserved: verdict });
      }
      const shots = evalpointHashes(row.candidateDir);
      if (shots.length > 0 && shots.length === referenceShots.length && shots.every((hash, index) => hash === referenceShots[index])) {
        identical.push({ taskId: task.id, candidate: row.candidate });
        continue;
      }
      if (record.scores.final >= referenceFinal) {
        problems.push(
          `task ${task.id}: mutant ${row.candidate} scores ${pct(record.scores.final)} %, not below the true page's ${pct(referenceFinal)} % (aligned Final)`,
        );
      }
    }
    const freezes = mutants
      .filter((row) => row.spec?.operator === "freeze-after")
      .map((row) => ({ k: row.spec?.parameter ?? 0, final: scoresOf(rows, task, row.candidate, "aligned")?.final ?? 0 }))
      .sort((a, b) => a.k - b.k);
    for (let index = 1; index < freezes.length; index++) {
      const [lower, higher] = [freezes[index - 1]!, freezes[index]!];
      if (higher.final < lower.final)
        problems.push(
          `task ${task.id}: freeze-after:${higher.k} scores ${pct(higher.final)} %, below freeze-after:${lower.k}'s ${pct(lower.final)} % (not monotone in k)`,
        );
    }
  }
  const agreed = judged.filter((step) => step.judge === step.deserved.verdict).length;
  const agreement = judged.length === 0 ? 1 : agreed / judged.length;
  if (judged.length > 0 && agreement < LADDER_TARGETS.agreementMin) {
    problems.push(
      `the offline judge agrees with the deserved verdict on ${pct(agreement)} % of the ladder's ${judged.length} judged steps ` +
        `(target ≥ ${LADDER_TARGETS.agreementMin * 100} %)`,
    );
    for (const step of judged.filter((entry) => entry.judge !== entry.deserved.verdict).slice(0, 30)) {
      problems.push(
        `  task ${step.taskId} ${step.candidate} action ${step.actionIndex}: judge ${step.judge}, deserved ${step.deserved.verdict} (${step.deserved.why})`,
      );
    }
  }

  // One row per operator: means over the tasks it was run on.
  const labels = [
    ...new Set(rows.filter((row) => row.spec).map((row) => (row.spec?.operator === "freeze-after" ? `freeze-after:${row.spec.parameter}` : row.candidate))),
  ];
  const lines = [
    "| candidate | tasks | mean IFS | mean Final aligned | mean Final official | below the true page | judged steps | judge agrees |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const summary = (label: string, match: (row: CalibrationRow) => boolean) => {
    const chosen = rows.filter(match);
    const aligned = chosen.map((row) => recordOf(row, "aligned")?.scores);
    const official = chosen.map((row) => recordOf(row, "official")?.scores.final ?? 0);
    const steps = judged.filter((step) => chosen.some((row) => row.task.id === step.taskId && row.candidate === step.candidate));
    const below = chosen.filter((row) => {
      if (identical.some((entry) => entry.taskId === row.task.id && entry.candidate === row.candidate)) return false;
      return (recordOf(row, "aligned")?.scores.final ?? 0) < (scoresOf(rows, row.task, "reference", "aligned")?.final ?? 0);
    }).length;
    const same = chosen.filter((row) => identical.some((entry) => entry.taskId === row.task.id && entry.candidate === row.candidate)).length;
    const agree = steps.length === 0 ? "–" : `${pct(steps.filter((step) => step.judge === step.deserved.verdict).length / steps.length)} %`;
    lines.push(
      `| ${label} | ${chosen.length} | ${pct(mean(aligned.map((scores) => scores?.ifs ?? 0)))} | ` +
        `${pct(mean(aligned.map((scores) => scores?.final ?? 0)))} | ${pct(mean(official))} | ${below}${same > 0 ? ` (+${same} identical)` : ""} | ` +
        `${steps.length} | ${agree} |`,
    );
  };
  summary("reference", (row) => row.candidate === "reference");
  summary("blank", (row) => row.candidate === "blank");
  for (const label of labels) summary(`mutant ${label}`, (row) => row.candidate === label);
  lines.push(`| all mutants | | | | | | ${judged.length} | ${judged.length === 0 ? "–" : `${pct(agreement)} %`} |`);
  return { judged, agreement, identical, problems, table: lines.join("\n") };
}
