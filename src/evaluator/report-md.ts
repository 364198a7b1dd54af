/**
 * `<results>/reports/<model>_metrics.md`: one row per task and an `avg` row (the
 * unweighted mean over tasks), percentages with two decimals, in one of two styles — the
 * profile of the rows decides (src/protocol.ts):
 * - `harness` (official): the harness's title (`# model: <name> result`), columns IFS(%)
 *   OCR(%) DINO(%) LFS(%) HFS(%) VFS(%) Final(%), rows in task-file order, the mean over
 *   the tasks that have an index.html, and the file named after the model as given
 *   ('/' → '__', case kept);
 * - `iwr` (corrected): columns LFS HFS IFS VFS Final OCR DINO, rows by task id, the mean
 *   over every task (a missing page scores 0), the file named after the model's folder.
 * Both add a Coverage column (100 for a task with a page, 0 without; its avg is the share
 * of tasks with a page) and the settings below the table.
 *
 * A report averages only results produced under the same settings (profile, judges, OCR
 * engine, DINO or its fallback, pairing mode, prompt hashes): anything else is refused
 * with the keys that differ, so no table silently blends two evaluators.
 */

import { IwrError } from "../errors.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { redactString } from "../log/redact.ts";
import { type ProtocolProfile, profileRules } from "../protocol.ts";
import { metricsReportPath, modelFolderName } from "../results/layout.ts";
import { averageScores, type TaskScores } from "./aggregate.ts";
import { comparableSettings, type EvalSettings } from "./eval-record.ts";
import { EVALUATOR_SETTINGS } from "./settings.ts";

export interface ReportRow {
  taskId: number;
  scores: TaskScores;
  settings: EvalSettings;
  /** Whether the task had a candidate page (default true); the official mean leaves out those without. */
  hasPage?: boolean;
}

type ScoreColumn = { header: string; key: "lfs" | "hfs" | "ifs" | "vfs" | "final" | "ocrMean" | "dinoMean" };

const COLUMNS: Record<"harness" | "iwr", readonly ScoreColumn[]> = {
  iwr: [
    { header: "LFS", key: "lfs" },
    { header: "HFS", key: "hfs" },
    { header: "IFS", key: "ifs" },
    { header: "VFS", key: "vfs" },
    { header: "Final", key: "final" },
    { header: "OCR", key: "ocrMean" },
    { header: "DINO", key: "dinoMean" },
  ],
  harness: [
    { header: "IFS(%)", key: "ifs" },
    { header: "OCR(%)", key: "ocrMean" },
    { header: "DINO(%)", key: "dinoMean" },
    { header: "LFS(%)", key: "lfs" },
    { header: "HFS(%)", key: "hfs" },
    { header: "VFS(%)", key: "vfs" },
    { header: "Final(%)", key: "final" },
  ],
};

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

function profileOf(settings: Record<string, string>): ProtocolProfile {
  return settings.protocol === "official" ? "official" : "corrected";
}

/** The model name in the report's title and file name: the harness keeps its case, ours is the model's folder. */
function reportStem(model: string, profile: ProtocolProfile): string {
  return profileRules(profile).reportStyle === "harness" ? model.replaceAll("/", "__") : modelFolderName(model);
}

export interface ReportOptions {
  /** Task ids left out because they have no eval.json; listed under the table. */
  missing?: readonly number[];
  /** Task-file order of the ids (the harness's row order); rows not in it follow by id. */
  taskOrder?: readonly number[];
}

function orderRows(rows: readonly ReportRow[], style: "harness" | "iwr", taskOrder: readonly number[] | undefined): ReportRow[] {
  const byId = [...rows].sort((a, b) => a.taskId - b.taskId);
  if (style !== "harness" || !taskOrder) return byId;
  const position = new Map(taskOrder.map((id, index) => [id, index]));
  const rank = (row: ReportRow) => position.get(row.taskId) ?? taskOrder.length + row.taskId;
  return byId.sort((a, b) => rank(a) - rank(b));
}

/** The report's Markdown. */
export function renderMetricsMarkdown(model: string, rows: readonly ReportRow[], options: ReportOptions = {}): string {
  const settings = commonSettings(rows);
  const profile = profileOf(settings);
  const rules = profileRules(profile);
  const style = rules.reportStyle;
  const columns = COLUMNS[style];
  const sorted = orderRows(rows, style, options.taskOrder);
  const hasPage = (row: ReportRow) => row.hasPage !== false;
  const averaged = rules.averageOver === "tasks-with-page" ? sorted.filter(hasPage) : sorted;
  const withPage = sorted.filter(hasPage).length;
  const cells = (values: Record<ScoreColumn["key"], number>) => columns.map((column) => percent(values[column.key]));
  const row = (label: string, values: string[], coverage: number) => `| ${label} | ${[...values, percent(coverage)].join(" | ")} |`;
  const table = sorted.map((entry) =>
    hasPage(entry) || rules.averageOver === "all-tasks"
      ? row(String(entry.taskId), cells(entry.scores), hasPage(entry) ? 1 : 0)
      : row(
          String(entry.taskId),
          columns.map(() => "—"),
          0,
        ),
  );
  const averageRow =
    averaged.length > 0
      ? row(EVALUATOR_SETTINGS.report.avgRowLabel, cells(averageScores(averaged.map((entry) => entry.scores))), withPage / sorted.length)
      : `| ${EVALUATOR_SETTINGS.report.avgRowLabel} | ${[...columns.map(() => "—"), percent(0)].join(" | ")} |`;
  const coverageHeader = style === "harness" ? "Coverage(%)" : "Coverage";
  const title = style === "harness" ? `# model: ${reportStem(model, profile)} result` : `# ${model} metrics`;
  const meanOver =
    rules.averageOver === "tasks-with-page"
      ? `the unweighted mean over the ${averaged.length} task(s) with an index.html, as the harness computes it; ` +
        "tasks without one are shown with — and counted only in Coverage"
      : "the unweighted mean over every task; a task without an index.html scores 0";
  const lines = [
    title,
    "",
    `| task | ${[...columns.map((column) => column.header), coverageHeader].join(" | ")} |`,
    `|---|${[...columns, null].map(() => "---:").join("|")}|`,
    ...table,
    averageRow,
    "",
    `Tasks: ${sorted.length} (${withPage} with an index.html). ` +
      `Percentages; \`${EVALUATOR_SETTINGS.report.avgRowLabel}\` is ${meanOver}. Protocol profile: ${profile}.`,
    ...(options.missing && options.missing.length > 0 ? [`Left out (no eval.json): tasks ${options.missing.join(", ")}.`] : []),
    `DINO column metric: ${settings.visualMetric ?? "unknown"}; ` +
      `MLLM judge: ${settings.mllmJudgeModel ?? "unknown"} (${settings.mllmJudgeKind ?? "unknown"}); pairing: ${settings.pairingMode ?? "unknown"}.`,
    "",
    "## Settings",
    "",
    ...Object.entries(settings).map(([key, value]) => `- ${key}: ${value}`),
    "",
  ];
  return lines.join("\n");
}

/** Writes `<resultsDir>/reports/<stem>_metrics.md` atomically (the stem by the rows' profile); returns its path. */
export function writeMetricsReport(resultsDir: string, model: string, rows: readonly ReportRow[], options: ReportOptions = {}): string {
  const file = metricsReportPath(resultsDir, reportStem(model, profileOf(commonSettings(rows))));
  writeFileAtomicSync(file, redactString(renderMetricsMarkdown(model, rows, options)));
  return file;
}
