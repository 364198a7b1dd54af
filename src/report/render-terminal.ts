/**
 * The report's terminal face: the per-arm table the CLI prints after a run or a report, and
 * the closing line that says where report.html is.
 */
import { ARM_COLUMNS, boundColumns, differenceLine, fixed, judgeNoiseLine, pct, viewCommand } from "./render-shared.ts";
import type { ReportData } from "./report-data.ts";

/** The per-arm table for a terminal (scores in percent). */
export function terminalTable(data: ReportData): string {
  const rows = [ARM_COLUMNS.map(([title]) => title), ...data.arms.map((arm) => ARM_COLUMNS.map(([, cell]) => cell(arm)))];
  const widths = ARM_COLUMNS.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) => row.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
  const lines = [line(rows[0]!), widths.map((width) => "-".repeat(width)).join("  "), ...rows.slice(1).map(line)];
  if (data.comparison) {
    const { a, b, meanDifference, ci95, tasks } = data.comparison;
    lines.push(
      "",
      `Final(${a}) − Final(${b}): ${pct(meanDifference)} points over ${tasks} task(s), 95 % bootstrap interval [${pct(ci95[0])}, ${pct(ci95[1])}]`,
    );
  }
  for (const bound of data.feedbackBounds ?? []) {
    const overall = boundColumns(bound).map((column) => `${column.title} ${pct(column.pick(bound.overall) ?? 0)}`);
    lines.push("", `Final, overall: ${overall.join("; ")}`, ...bound.comparisons.map(differenceLine));
  }
  if (data.judgeNoise) lines.push("", judgeNoiseLine(data));
  if (data.selfCheck) {
    const agreement = data.selfCheck;
    lines.push(
      "",
      `self-check (given track) against the evaluator: mean Spearman ρ ${fixed(agreement.meanSpearman)}, ` +
        `mean pairwise agreement ${fixed(agreement.meanPairwise)} over ${agreement.perTask.length} task(s)`,
    );
  }
  return lines.join("\n");
}

/** The closing line of a run or a report: where report.html is, its size, and what shows the rest. */
export function reportLocationLine(htmlFile: string, htmlBytes: number, runDir: string): string {
  return `report: ${htmlFile} (${formatBytes(htmlBytes)}; also report.md, report.json) — ${viewCommand(runDir)} shows every cell`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}
