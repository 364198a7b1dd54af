/** report.md: the report's tables in Markdown (scores in percent), every failed cell listed. */
import { FAILURE_KIND_LABELS } from "./failures.ts";
import { ARM_COLUMNS, BOUND_INTRO, boundRows, differenceLine, fixed, isOracleArm, judgeNoiseLine, ORACLE_NOTE, pct } from "./render-shared.ts";
import type { ReportData } from "./report-data.ts";

function markdownTable(header: string[], rows: string[][]): string {
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
}

export function reportMarkdown(data: ReportData): string {
  const parts = [
    `# ${data.name}`,
    "",
    `Evaluator: ${Object.entries(data.evaluator)
      .map(([key, value]) => `${key} ${String(value)}`)
      .join(", ")}. Scores in percent.`,
    "",
  ];
  parts.push(
    markdownTable(
      ARM_COLUMNS.map(([title]) => title),
      data.arms.map((arm) => ARM_COLUMNS.map(([, cell]) => cell(arm))),
    ),
    "",
  );
  parts.push(
    "## Other weightings and our extra metric",
    "",
    markdownTable(
      ["arm", "Final α=0.5", "Final α=0.7", "Final α=0.9", "VFS (unreached = 0)"],
      data.arms.map((arm) => [
        arm.name,
        pct(arm.finalByAlpha["0.5"] ?? 0),
        pct(arm.finalByAlpha["0.7"] ?? 0),
        pct(arm.finalByAlpha["0.9"] ?? 0),
        pct(arm.vfsAllCheckpoints),
      ]),
    ),
    "",
  );
  for (const [title, table] of [
    ["interaction class", data.byClass.interaction],
    ["visual class", data.byClass.visual],
  ] as const) {
    parts.push(
      `## Final by ${title}`,
      "",
      markdownTable(
        [title, ...data.arms.map((arm) => arm.name)],
        Object.entries(table).map(([name, byArm]) => [name, ...data.arms.map((arm) => (byArm[arm.name] === undefined ? "–" : pct(byArm[arm.name]!)))]),
      ),
      "",
    );
  }
  if (data.comparison) {
    const c = data.comparison;
    parts.push(
      `## ${c.a} against ${c.b}`,
      "",
      `Mean paired difference in Final: ${pct(c.meanDifference)} points over ${c.tasks} task(s); ` +
        `95 % bootstrap interval [${pct(c.ci95[0])}, ${pct(c.ci95[1])}] (${c.resamples} resamples).`,
      "",
    );
    parts.push(
      markdownTable(
        ["task", c.a, c.b, "difference"],
        c.perTask.map((row) => [String(row.taskId), pct(row.a), pct(row.b), pct(row.difference)]),
      ),
      "",
    );
  }
  for (const bound of data.feedbackBounds ?? []) {
    const { header, rows } = boundRows(bound);
    parts.push(`## ${bound.arms.oracle}: ${bound.label}`, "", `${BOUND_INTRO} Scores in percent.`, "", markdownTable(header, rows), "");
    parts.push(...bound.comparisons.map((c) => `- ${differenceLine(c)} (${c.resamples} resamples)`), "");
  }
  if (data.judgeNoise) parts.push("## The judge's own noise", "", judgeNoiseLine(data), "");
  for (const curve of data.curves) {
    parts.push(
      `## ${curve.arm}: score by iteration`,
      "",
      ...(isOracleArm(data, curve.arm) ? [`This arm's score of each draft is the evaluator's Final, fed back to it (${ORACLE_NOTE}).`, ""] : []),
      markdownTable(
        ["round", "evaluator Final (best self-scored draft so far)", "self-score", "tasks"],
        curve.rounds.map((round) => [String(round.round), pct(round.final), pct(round.selfScore), String(round.tasks)]),
      ),
      "",
    );
  }
  if (data.selfCheck) {
    const agreement = data.selfCheck;
    parts.push(
      "## The self-check against the evaluator (given track)",
      "",
      `Mean Spearman ρ ${fixed(agreement.meanSpearman)}, ` +
        `mean pairwise order agreement ${fixed(agreement.meanPairwise)}, over ${agreement.perTask.length} task(s).`,
      "",
    );
    parts.push(
      markdownTable(
        ["task", "pages", "Spearman ρ", "pairs", "pairwise agreement"],
        agreement.perTask.map((row) => [String(row.taskId), String(row.pages), fixed(row.spearman), String(row.pairs), fixed(row.pairwiseAgreement)]),
      ),
      "",
    );
  }
  parts.push(...failureSummaryMarkdown(data));
  const failures = data.cells.filter((cell) => cell.error);
  if (failures.length > 0)
    parts.push("## Failed cells", "", ...failures.map((cell) => `- ${cell.arm} repeat ${cell.repeat} task ${cell.taskId}: ${cell.error}`), "");
  parts.push("## Notes", "", ...data.notes.map((note) => `- ${note}`), "");
  return parts.join("\n");
}

function failureSummaryMarkdown(data: ReportData): string[] {
  const summary = data.failures;
  const parts = [
    "## What failed",
    "",
    `${summary.cells - summary.passed} of ${summary.cells} cell(s) have a step that did not pass. ` +
      "Each cell counts once, by its first failing step (the action at success_step).",
    "",
  ];
  if (summary.byKind.length > 0)
    parts.push(
      markdownTable(
        ["why the first failing step failed", "cells", "share", ...data.arms.map((arm) => arm.name)],
        summary.byKind.map((row) => [row.label, String(row.cells), pct(row.share), ...data.arms.map((arm) => String(row.byArm[arm.name] ?? 0))]),
      ),
      "",
    );
  if (summary.byAction.length > 0)
    parts.push(
      "Which actions fail most (action type × the task's interaction class): reached = replays that got to such an action, " +
        "failed = those where it was the first failing step.",
      "",
      markdownTable(
        ["action", "class", "reached", "failed", "failure rate", "kinds"],
        summary.byAction.map((row) => [
          row.actionType,
          row.interaction,
          String(row.reached),
          String(row.failed),
          pct(row.failureRate),
          Object.entries(row.byKind)
            .map(([kind, count]) => `${FAILURE_KIND_LABELS[kind as keyof typeof FAILURE_KIND_LABELS]} ×${count}`)
            .join(", "),
        ]),
      ),
      "",
    );
  parts.push(
    summary.unpassedTasks.length === 0
      ? "Every task was passed (IFS = 100) by at least one cell."
      : `Tasks no arm passes (no cell reached IFS = 100): ${summary.unpassedTasks.length}.`,
    "",
  );
  if (summary.unpassedTasks.length > 0)
    parts.push(
      markdownTable(
        ["task", "site", "class", "cells", "best Final", "best arm", "first failing steps"],
        summary.unpassedTasks.map((row) => [
          String(row.taskId),
          row.site,
          `${row.interaction}/${row.visual}`,
          String(row.cells),
          pct(row.bestFinal),
          row.bestArm,
          row.kinds,
        ]),
      ),
      "",
    );
  if (summary.passedOnlyByCalibration && summary.passedOnlyByCalibration.length > 0)
    parts.push(
      `Tasks passed only by calibration arms (built from the true page): ${summary.passedOnlyByCalibration
        .map((row) => `${row.taskId} (${row.arms.join(", ")})`)
        .join(", ")}.`,
      "",
    );
  return parts;
}
