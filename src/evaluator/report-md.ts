/**
 * `<results>/reports/<model>_metrics.md` in the benchmark's layout: one row per task and
 * an `avg` row (the unweighted mean over tasks), percentages with two decimals, columns
 * LFS HFS IFS VFS Final, then the OCR and DINO means for diagnosis (MLLM's mean is HFS).
 *
 * A report averages only results produced under the same settings (judges, OCR engine,
 * DINO or its fallback, pairing mode, prompt hashes): anything else is refused with the
 * keys that differ, so no table silently blends two evaluators.
 */
import { writeFileAtomicSync } from "../files/atomic.ts";
import { IwrError } from "../errors.ts";
import { redactString } from "../log/redact.ts";
import { metricsReportPath, modelFolderName } from "../results/layout.ts";
import { averageScores, type TaskScores } from "./aggregate.ts";
import { comparableSettings, type EvalSettings } from "./eval-record.ts";
import { EVALUATOR_SETTINGS } from "./settings.ts";

export interface ReportRow {
  taskId: number;
  scores: TaskScores;
  settings: EvalSettings;
}

const COLUMNS = [
  { header: "LFS", key: "lfs" },
  { header: "HFS", key: "hfs" },
  { header: "IFS", key: "ifs" },
  { header: "VFS", key: "vfs" },
  { header: "Final", key: "final" },
  { header: "OCR", key: "ocrMean" },
  { header: "DINO", key: "dinoMean" },
] as const;

export function percent(value: number): string {
  return (value * 100).toFixed(EVALUATOR_SETTINGS.report.decimals);
}

/**
 * The settings every row shares; throws an IwrError listing each key whose values
 * differ, with the task ids behind each value.
 */
export function commonSettings(rows: readonly ReportRow[]): Record<string, string> {
  const first = rows[0];
  if (!first) throw new IwrError("EVALUATOR", "no results to report");
  const flats = rows.map((row) => ({ taskId: row.taskId, flat: comparableSettings(row.settings) }));
  const keys = new Set(flats.flatMap(({ flat }) => Object.keys(flat)));
  const differences: string[] = [];
  for (const key of [...keys].sort()) {
    const byValue = new Map<string, number[]>();
    for (const { taskId, flat } of flats) {
      const value = flat[key] ?? "(absent)";
      byValue.set(value, [...(byValue.get(value) ?? []), taskId]);
    }
    if (byValue.size > 1) {
      const detail = [...byValue].map(([value, ids]) => `'${value}' (tasks ${ids.join(", ")})`).join(" vs ");
      differences.push(`${key}: ${detail}`);
    }
  }
  if (differences.length > 0) {
    throw new IwrError("EVALUATOR", `refusing to average results produced under different judge settings:\n  ${differences.join("\n  ")}`, {
      differingKeys: differences.map((line) => line.split(":")[0]),
    });
  }
  return comparableSettings(first.settings);
}

function tableRow(label: string, values: Record<(typeof COLUMNS)[number]["key"], number>): string {
  return `| ${label} | ${COLUMNS.map((column) => percent(values[column.key])).join(" | ")} |`;
}

export interface ReportOptions {
  /** Task ids left out because they have no eval.json; listed under the table. */
  missing?: readonly number[];
}

/** The report's Markdown. Rows are sorted by task id. */
export function renderMetricsMarkdown(model: string, rows: readonly ReportRow[], options: ReportOptions = {}): string {
  const settings = commonSettings(rows);
  const sorted = [...rows].sort((a, b) => a.taskId - b.taskId);
  const average = averageScores(sorted.map((row) => row.scores));
  const lines = [
    `# ${model} metrics`,
    "",
    `| task | ${COLUMNS.map((column) => column.header).join(" | ")} |`,
    `|---|${COLUMNS.map(() => "---:").join("|")}|`,
    ...sorted.map((row) => tableRow(String(row.taskId), row.scores)),
    tableRow(EVALUATOR_SETTINGS.report.avgRowLabel, average),
    "",
    `Tasks: ${sorted.length}. Percentages; \`${EVALUATOR_SETTINGS.report.avgRowLabel}\` is the unweighted mean over tasks.`,
    ...(options.missing && options.missing.length > 0 ? [`Left out (no eval.json): tasks ${options.missing.join(", ")}.`] : []),
    `DINO column metric: ${settings.visualMetric ?? "unknown"}; MLLM judge: ${settings.mllmJudgeModel ?? "unknown"} (${settings.mllmJudgeKind ?? "unknown"}); pairing: ${settings.pairingMode ?? "unknown"}.`,
    "",
    "## Settings",
    "",
    ...Object.entries(settings).map(([key, value]) => `- ${key}: ${value}`),
    "",
  ];
  return lines.join("\n");
}

/** Writes `<resultsDir>/reports/<model-dir>_metrics.md` atomically; returns its path. */
export function writeMetricsReport(resultsDir: string, model: string, rows: readonly ReportRow[], options: ReportOptions = {}): string {
  const file = metricsReportPath(resultsDir, modelFolderName(model));
  writeFileAtomicSync(file, redactString(renderMetricsMarkdown(model, rows, options)));
  return file;
}
