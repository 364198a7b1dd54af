/**
 * What the report's three faces (the terminal table, report.md and report.html) share:
 * number and text formatting, the per-arm columns, the lines of a paired difference, a
 * feedback bound and the judge's noise, and the command that opens a run in `iwr view`.
 */
import path from "node:path";
import type { FeedbackBound } from "./agent-report-parts.ts";
import type { ArmSummary, Comparison } from "./arm-scores.ts";
import type { ReportData } from "./report-data.ts";

export const pct = (value: number) => (value * 100).toFixed(1);
export const fixed = (value: number | null) => (value === null ? "–" : value.toFixed(3));
export const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export const ARM_COLUMNS: Array<[string, (arm: ArmSummary) => string]> = [
  ["arm", (arm) => arm.name],
  ["kind", (arm) => arm.kind],
  ["tasks", (arm) => String(arm.tasks)],
  ["IFS", (arm) => pct(arm.ifs)],
  ["LFS", (arm) => pct(arm.lfs)],
  ["HFS", (arm) => pct(arm.hfs)],
  ["VFS", (arm) => pct(arm.vfs)],
  ["Final", (arm) => pct(arm.final)],
  ["Final 95 % CI", (arm) => `${pct(arm.ci95.final[0])}–${pct(arm.ci95.final[1])}`],
  ["success", (arm) => pct(arm.successRate)],
  ["coverage", (arm) => pct(arm.coverage)],
  ["failed", (arm) => String(arm.failed)],
  ["tokens", (arm) => String(arm.inputTokens + arm.outputTokens)],
  ["cost $", (arm) => arm.costUsd.toFixed(4)],
  ["wall s", (arm) => (arm.wallMs / 1000).toFixed(1)],
];

export function differenceLine(c: Comparison): string {
  return (
    `Final(${c.a}) − Final(${c.b}): ${pct(c.meanDifference)} points over ${c.tasks} task(s), ` +
    `95 % bootstrap interval [${pct(c.ci95[0])}, ${pct(c.ci95[1])}]`
  );
}

/** The columns of a feedback bound's table: single pass, agent with self-check feedback, agent with oracle feedback. */
export function boundColumns(bound: FeedbackBound): Array<{ title: string; pick: (row: FeedbackBound["overall"]) => number | undefined }> {
  return [
    ...(bound.arms.singlePass ? [{ title: `single pass (${bound.arms.singlePass})`, pick: (row: FeedbackBound["overall"]) => row.singlePass }] : []),
    ...(bound.arms.selfCheck
      ? [{ title: `agent, self-check feedback (${bound.arms.selfCheck})`, pick: (row: FeedbackBound["overall"]) => row.selfCheck }]
      : []),
    { title: `agent, ${bound.label} (${bound.arms.oracle})`, pick: (row: FeedbackBound["overall"]) => row.oracle },
  ];
}

export function boundRows(bound: FeedbackBound): { header: string[]; rows: string[][] } {
  const columns = boundColumns(bound);
  const cell = (value: number | undefined) => (value === undefined ? "–" : pct(value));
  return {
    header: ["task", ...columns.map((column) => column.title)],
    rows: [
      ...bound.perTask.map((row) => [String(row.taskId), ...columns.map((column) => cell(column.pick(row)))]),
      ["overall", ...columns.map((column) => cell(column.pick(bound.overall)))],
    ],
  };
}

export const ORACLE_NOTE = "oracle feedback: it uses the task's truth";
export const isOracleArm = (data: ReportData, arm: string) => (data.feedbackBounds ?? []).some((bound) => bound.arms.oracle === arm);

export const BOUND_INTRO =
  "Final of the single pass, the agent with its self-check feedback, and the agent told the fixed evaluator's verdict on each draft " +
  "(which step failed, the judge's reason, the reference checkpoints): what refinement gains when its feedback is perfect.";

export function judgeNoiseLine(data: ReportData): string {
  const noise = data.judgeNoise!;
  return `judge noise (${noise.repeats} judgements per assertion): ${noise.perArm
    .map((arm) => `${arm.arm} SD of Final from the judge ≈ ${pct(arm.finalSdFromJudge)} points (${arm.disagreeing}/${arm.judgedSteps} steps disagreed)`)
    .join("; ")}`;
}

/** The command that opens the run in `iwr view` (the folder quoted when it needs it). */
export function viewCommand(runDir?: string): string {
  if (!runDir) return "iwr view <run folder>";
  const shown = path.relative(process.cwd(), runDir) || ".";
  const plain = shown.startsWith("..") || path.isAbsolute(shown) ? runDir : shown;
  return `iwr view ${/^[\w./@+-]+$/.test(plain) ? plain : `'${plain.replace(/'/g, "'\\''")}'`}`;
}

/** An HTML table of cells already escaped (or markup meant as such). */
export function htmlTable(header: string[], rows: string[][]): string {
  return (
    `<table><thead><tr>${header.map((cell) => `<th>${cell}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join("")}</tr>`).join("")}</tbody></table>`
  );
}
