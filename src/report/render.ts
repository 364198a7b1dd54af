/**
 * The report's three faces: a terminal table per arm, report.md, and a self-contained
 * report.html (no network: images inline as small JPEG data URLs, charts as inline SVG,
 * no script). The HTML shows, per task and checkpoint, the checkpoint beside each arm's
 * screenshot with the step's scores and the judge's verdict.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { FAILURE_KIND_LABELS } from "./failures.ts";
import type { ArmSummary, CellScores, Comparison, FeedbackBound, ReportData } from "./report-data.ts";

const pct = (value: number) => (value * 100).toFixed(1);
const fixed = (value: number | null) => (value === null ? "–" : value.toFixed(3));
const shortText = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);
const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const ARM_COLUMNS: Array<[string, (arm: ArmSummary) => string]> = [
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

function differenceLine(c: Comparison): string {
  return (
    `Final(${c.a}) − Final(${c.b}): ${pct(c.meanDifference)} points over ${c.tasks} task(s), ` +
    `95 % bootstrap interval [${pct(c.ci95[0])}, ${pct(c.ci95[1])}]`
  );
}

/** The columns of a feedback bound's table: single pass, agent with self-check feedback, agent with oracle feedback. */
function boundColumns(bound: FeedbackBound): Array<{ title: string; pick: (row: FeedbackBound["overall"]) => number | undefined }> {
  return [
    ...(bound.arms.singlePass ? [{ title: `single pass (${bound.arms.singlePass})`, pick: (row: FeedbackBound["overall"]) => row.singlePass }] : []),
    ...(bound.arms.selfCheck
      ? [{ title: `agent, self-check feedback (${bound.arms.selfCheck})`, pick: (row: FeedbackBound["overall"]) => row.selfCheck }]
      : []),
    { title: `agent, ${bound.label} (${bound.arms.oracle})`, pick: (row: FeedbackBound["overall"]) => row.oracle },
  ];
}

function boundRows(bound: FeedbackBound): { header: string[]; rows: string[][] } {
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

const ORACLE_NOTE = "oracle feedback: it uses the task's truth";
const isOracleArm = (data: ReportData, arm: string) => (data.feedbackBounds ?? []).some((bound) => bound.arms.oracle === arm);

const BOUND_INTRO =
  "Final of the single pass, the agent with its self-check feedback, and the agent told the fixed evaluator's verdict on each draft " +
  "(which step failed, the judge's reason, the reference checkpoints): what refinement gains when its feedback is perfect.";

function judgeNoiseLine(data: ReportData): string {
  const noise = data.judgeNoise!;
  return `judge noise (${noise.repeats} judgements per assertion): ${noise.perArm
    .map((arm) => `${arm.arm} SD of Final from the judge ≈ ${pct(arm.finalSdFromJudge)} points (${arm.disagreeing}/${arm.judgedSteps} steps disagreed)`)
    .join("; ")}`;
}

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

// ---- SVG charts -------------------------------------------------------------------

const PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00", "#b82e2e", "#316395"];

function barChart(title: string, bars: Array<{ label: string; value: number }>): string {
  const width = 560;
  const rowHeight = 22;
  const left = 160;
  const height = 30 + bars.length * rowHeight;
  const items = bars
    .map((bar, index) => {
      const y = 24 + index * rowHeight;
      const w = Math.max(0, Math.min(1, bar.value)) * (width - left - 60);
      return (
        `<text x="${left - 6}" y="${y + 14}" text-anchor="end">${escapeHtml(bar.label)}</text>` +
        `<rect x="${left}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowHeight - 6}" fill="${PALETTE[index % PALETTE.length]}"/>` +
        `<text x="${(left + w + 4).toFixed(1)}" y="${y + 14}">${pct(bar.value)}</text>`
      );
    })
    .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-size="12" font-family="sans-serif">` +
    `<text x="4" y="14" font-weight="bold">${escapeHtml(title)}</text>${items}</svg>`
  );
}

interface Series {
  label: string;
  points: Array<{ x: number; y: number }>;
  line?: boolean;
}

function xyChart(title: string, xLabel: string, yLabel: string, series: Series[], options: { diagonal?: boolean; xMax?: number } = {}): string {
  const width = 560;
  const height = 320;
  const [left, right, top, bottom] = [50, 150, 24, 40];
  const all = series.flatMap((entry) => entry.points);
  const xMax = options.xMax ?? Math.max(1e-9, ...all.map((point) => point.x));
  const sx = (x: number) => left + (x / xMax) * (width - left - right);
  const sy = (y: number) => height - bottom - Math.max(0, Math.min(1, y)) * (height - top - bottom);
  const axes =
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="#444"/>` +
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}" stroke="#444"/>`;
  const ticks =
    [0, 0.25, 0.5, 0.75, 1].map((t) => `<text x="${left - 4}" y="${sy(t) + 4}" text-anchor="end">${pct(t)}</text>`).join("") +
    [0, 0.5, 1].map((t) => `<text x="${sx(t * xMax)}" y="${height - bottom + 14}" text-anchor="middle">${Number((t * xMax).toPrecision(3))}</text>`).join("");
  const diagonal = options.diagonal ? `<line x1="${sx(0)}" y1="${sy(0)}" x2="${sx(xMax)}" y2="${sy(1)}" stroke="#bbb" stroke-dasharray="4 3"/>` : "";
  const drawn = series
    .map((entry, index) => {
      const color = PALETTE[index % PALETTE.length];
      const dots = entry.points.map((point) => `<circle cx="${sx(point.x).toFixed(1)}" cy="${sy(point.y).toFixed(1)}" r="3.5" fill="${color}"/>`).join("");
      const path =
        entry.line && entry.points.length > 1
          ? `<polyline fill="none" stroke="${color}" stroke-width="2" ` +
            `points="${entry.points.map((point) => `${sx(point.x).toFixed(1)},${sy(point.y).toFixed(1)}`).join(" ")}"/>`
          : "";
      const legend =
        `<rect x="${width - right + 10}" y="${top + index * 18}" width="10" height="10" fill="${color}"/>` +
        `<text x="${width - right + 24}" y="${top + index * 18 + 9}">${escapeHtml(entry.label)}</text>`;
      return path + dots + legend;
    })
    .join("");
  const labels =
    `<text x="${(left + width - right) / 2}" y="${height - 6}" text-anchor="middle">${escapeHtml(xLabel)}</text>` +
    `<text x="12" y="${(top + height - bottom) / 2}" transform="rotate(-90 12 ${(top + height - bottom) / 2})" text-anchor="middle">` +
    `${escapeHtml(yLabel)}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-size="11" font-family="sans-serif">` +
    `<text x="4" y="14" font-weight="bold">${escapeHtml(title)}</text>${axes}${ticks}${diagonal}${drawn}${labels}</svg>`
  );
}

// ---- HTML --------------------------------------------------------------------------

/** The worst steps' thumbnails: wide enough to read a page's headings. */
const WORST_STEP_WIDTH = 240;

/** A small JPEG data URL of an image file ("" when it cannot be read). */
async function thumbnail(file: string, cache: Map<string, Promise<string>>, width: number): Promise<string> {
  const key = `${width}:${file}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = fs.existsSync(file)
      ? sharp(file)
          .resize({ width, withoutEnlargement: true })
          .jpeg({ quality: 60 })
          .toBuffer()
          .then(
            (jpeg) => `data:image/jpeg;base64,${jpeg.toString("base64")}`,
            () => "",
          )
      : Promise.resolve("");
    cache.set(key, pending);
  }
  return pending;
}

function htmlTable(header: string[], rows: string[][]): string {
  return (
    `<table><thead><tr>${header.map((cell) => `<th>${cell}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join("")}</tr>`).join("")}</tbody></table>`
  );
}

const STYLE =
  "body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 20px}" +
  "th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}" +
  "th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}\n" +
  ".steps td{vertical-align:top;text-align:left}.steps img{width:240px;display:block;border:1px solid #999}" +
  ".tasks td{white-space:nowrap}.tasks small{font-size:11px}.view-hint{background:#f4f7fb;border-left:3px solid #3366cc;padding:6px 10px}" +
  ".miss{color:#999;font-style:italic}.yes{color:#109618}.no{color:#dc3912}figure{margin:0}figcaption{font-size:12px}h2{margin-top:32px}";

/** The command that opens the run in `iwr view` (the folder quoted when it needs it). */
export function viewCommand(runDir?: string): string {
  if (!runDir) return "iwr view <run folder>";
  const shown = path.relative(process.cwd(), runDir) || ".";
  const plain = shown.startsWith("..") || path.isAbsolute(shown) ? runDir : shown;
  return `iwr view ${/^[\w./@+-]+$/.test(plain) ? plain : `'${plain.replace(/'/g, "'\\''")}'`}`;
}

/** The closing line of a run or a report: where report.html is, its size, and what shows the rest. */
export function reportLocationLine(htmlFile: string, htmlBytes: number, runDir: string): string {
  return `report: ${htmlFile} (${formatBytes(htmlBytes)}; also report.md, report.json) — ${viewCommand(runDir)} shows every cell`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}

export async function reportHtml(data: ReportData, options: { runDir?: string } = {}): Promise<string> {
  const thumbs = new Map<string, Promise<string>>();
  const sections: string[] = [];
  sections.push(
    `<h1>${escapeHtml(data.name)}</h1><p>Evaluator: ${escapeHtml(
      Object.entries(data.evaluator)
        .map(([key, value]) => `${key} ${String(value)}`)
        .join(", "),
    )}. Scores in percent. Made ${escapeHtml(data.createdAt)}.</p>` +
      `<p class="view-hint" data-view-hint>This file keeps the summaries, one row per task and the worst steps only: ` +
      `<code>${escapeHtml(viewCommand(options.runDir))}</code> shows every cell, step and image (filters, drill-down, side by side).</p>`,
  );
  sections.push(
    htmlTable(
      ARM_COLUMNS.map(([title]) => escapeHtml(title)),
      data.arms.map((arm) => ARM_COLUMNS.map(([, cell]) => escapeHtml(cell(arm)))),
    ),
  );
  sections.push(
    barChart(
      "Final by arm",
      data.arms.map((arm) => ({ label: arm.name, value: arm.final })),
    ),
  );
  sections.push(`<h2>Other weightings, and VFS with unreached checkpoints as 0 (our extra metric)</h2>`);
  sections.push(
    htmlTable(
      ["arm", "Final α=0.5", "Final α=0.7 (benchmark)", "Final α=0.9", "VFS (published)", "VFS (unreached = 0)"],
      data.arms.map((arm) => [
        escapeHtml(arm.name),
        pct(arm.finalByAlpha["0.5"] ?? 0),
        pct(arm.finalByAlpha["0.7"] ?? 0),
        pct(arm.finalByAlpha["0.9"] ?? 0),
        pct(arm.vfs),
        pct(arm.vfsAllCheckpoints),
      ]),
    ),
  );
  sections.push(
    xyChart(
      "Final against cost",
      "cost (US $)",
      "Final",
      data.arms.map((arm) => ({ label: arm.name, points: [{ x: arm.costUsd, y: arm.final }] })),
      { xMax: Math.max(0.01, ...data.arms.map((arm) => arm.costUsd)) * 1.1 },
    ),
  );
  for (const [title, table] of [
    ["interaction class", data.byClass.interaction],
    ["visual class", data.byClass.visual],
  ] as const) {
    sections.push(
      `<h2>Final by ${title}</h2>`,
      htmlTable(
        [escapeHtml(title), ...data.arms.map((arm) => escapeHtml(arm.name))],
        Object.entries(table).map(([name, byArm]) => [
          escapeHtml(name),
          ...data.arms.map((arm) => (byArm[arm.name] === undefined ? "–" : pct(byArm[arm.name]!))),
        ]),
      ),
    );
  }
  if (data.comparison) {
    const c = data.comparison;
    sections.push(
      `<h2>${escapeHtml(c.a)} against ${escapeHtml(c.b)}</h2>` +
        `<p>Mean paired difference in Final: <b>${pct(c.meanDifference)}</b> points over ${c.tasks} task(s); ` +
        `95 % bootstrap interval [${pct(c.ci95[0])}, ${pct(c.ci95[1])}] (${c.resamples} resamples over tasks).</p>`,
    );
    sections.push(
      htmlTable(
        ["task", escapeHtml(c.a), escapeHtml(c.b), "difference"],
        c.perTask.map((row) => [String(row.taskId), pct(row.a), pct(row.b), pct(row.difference)]),
      ),
    );
  }
  for (const bound of data.feedbackBounds ?? []) {
    const { header, rows } = boundRows(bound);
    sections.push(
      `<h2>${escapeHtml(bound.arms.oracle)}: ${escapeHtml(bound.label)}</h2><p>${escapeHtml(BOUND_INTRO)}</p>`,
      htmlTable(
        header.map(escapeHtml),
        rows.map((row) => row.map(escapeHtml)),
      ),
      `<ul>${bound.comparisons.map((c) => `<li>${escapeHtml(differenceLine(c))} (${c.resamples} resamples)</li>`).join("")}</ul>`,
    );
  }
  if (data.judgeNoise) {
    sections.push(
      `<h2>The judge's own noise</h2><p>${escapeHtml(judgeNoiseLine(data))}. ` +
        "This is the spread of one task's Final from the judge alone; the mean over n tasks moves about √n less.</p>",
    );
    sections.push(
      htmlTable(
        ["arm", "judged steps", "steps whose judgements disagreed", "mean SD of IFS", "SD of Final from the judge"],
        data.judgeNoise.perArm.map((arm) => [
          escapeHtml(arm.arm),
          String(arm.judgedSteps),
          String(arm.disagreeing),
          pct(arm.meanIfsSd),
          pct(arm.finalSdFromJudge),
        ]),
      ),
    );
  }
  for (const curve of data.curves) {
    sections.push(
      `<h2>${escapeHtml(curve.arm)}: score by iteration</h2>` +
        (isOracleArm(data, curve.arm)
          ? `<p>The evaluator's Final of each draft the agent saved, fed back to it while it ran (${escapeHtml(ORACLE_NOTE)}).</p>`
          : "<p>The evaluator's Final of each draft the agent saved, scored after the agent finished (never fed back to it).</p>"),
    );
    sections.push(
      xyChart(
        "best self-scored draft so far, mean over tasks",
        "round",
        "score",
        [
          { label: "evaluator Final", points: curve.rounds.map((round) => ({ x: round.round, y: round.final })), line: true },
          { label: "self-score", points: curve.rounds.map((round) => ({ x: round.round, y: round.selfScore })), line: true },
        ],
        { xMax: Math.max(1, curve.rounds.length - 1) },
      ),
    );
    sections.push(
      xyChart(
        "self-score against the evaluator's Final, every draft",
        "self-score",
        "evaluator Final",
        [
          {
            label: "draft",
            points: curve.points
              .filter((point) => point.selfScore !== undefined && point.final !== undefined)
              .map((point) => ({ x: point.selfScore!, y: point.final! })),
          },
        ],
        { diagonal: true, xMax: 1 },
      ),
    );
  }
  if (data.selfCheck) {
    const agreement = data.selfCheck;
    sections.push(
      "<h2>The self-check against the evaluator (given track)</h2>" +
        "<p>The agent's feedback signal computed on each arm's page from the task's inputs and its action descriptions, against the evaluator's Final. " +
        `Mean Spearman ρ <b>${fixed(agreement.meanSpearman)}</b>, mean pairwise order agreement <b>${fixed(agreement.meanPairwise)}</b> ` +
        `over ${agreement.perTask.length} task(s).</p>`,
    );
    sections.push(
      htmlTable(
        ["task", "pages", "Spearman ρ", "pairs", "pairwise agreement"],
        agreement.perTask.map((row) => [String(row.taskId), String(row.pages), fixed(row.spearman), String(row.pairs), fixed(row.pairwiseAgreement)]),
      ),
    );
    const arms = [...new Set(agreement.points.map((point) => point.arm))];
    sections.push(
      xyChart(
        "self-score against the evaluator's Final, every page",
        "self-score",
        "evaluator Final",
        arms.map((arm) => ({
          label: arm,
          points: agreement.points.filter((point) => point.arm === arm).map((point) => ({ x: point.selfScore, y: point.final })),
        })),
        { diagonal: true, xMax: 1 },
      ),
    );
  }
  sections.push(failureSummaryHtml(data));
  sections.push(perTaskHtml(data));
  sections.push(await worstStepsHtml(data, thumbs));
  const failures = data.cells.filter((cell) => cell.error);
  if (failures.length > 0) {
    const shown = failures.slice(0, FAILED_CELLS_LISTED);
    const more = failures.length - shown.length;
    sections.push(
      `<h2>Failed cells</h2><ul>${shown
        .map((cell) => `<li>${escapeHtml(`${cell.arm} repeat ${cell.repeat} task ${cell.taskId}: ${shortText(cell.error!, 200)}`)}</li>`)
        .join("")}</ul>${more > 0 ? `<p>… and ${more} more (report.md lists them all; <code>iwr view</code> shows each).</p>` : ""}`,
    );
  }
  sections.push(`<h2>Notes</h2><ul>${data.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("")}</ul>`);
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">` +
    `<title>${escapeHtml(data.name)}</title><style>${STYLE}</style></head><body>${sections.join("\n")}</body></html>\n`
  );
}

// ---- what failed, per task, the worst steps ------------------------------------------

/** At most this many failed cells are listed in report.html (report.md lists them all). */
const FAILED_CELLS_LISTED = 50;
/** The worst steps shown with thumbnails: a fixed number, so the file does not grow with the run. */
const WORST_STEPS_SHOWN = 8;

function failureLine(cell: Pick<CellScores, "failure">): string {
  const failure = cell.failure;
  if (!failure) return "passed";
  const where = failure.step === null ? "" : `step ${failure.step + 1}${failure.actionType ? ` (${failure.actionType})` : ""}: `;
  return `${where}${FAILURE_KIND_LABELS[failure.kind]}`;
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

function failureSummaryHtml(data: ReportData): string {
  const summary = data.failures;
  const parts = [
    `<h2 id="failures">What failed</h2><p>${summary.cells - summary.passed} of ${summary.cells} cell(s) have a step that did not pass. ` +
      "Each cell counts once, by its first failing step (the action at success_step).</p>",
  ];
  if (summary.byKind.length > 0)
    parts.push(
      htmlTable(
        ["why the first failing step failed", "cells", "share", ...data.arms.map((arm) => escapeHtml(arm.name))],
        summary.byKind.map((row) => [escapeHtml(row.label), String(row.cells), pct(row.share), ...data.arms.map((arm) => String(row.byArm[arm.name] ?? 0))]),
      ),
    );
  if (summary.byAction.length > 0)
    parts.push(
      "<p>Which actions fail most (action type × the task's interaction class): reached = replays that got to such an action, " +
        "failed = those where it was the first failing step.</p>",
      htmlTable(
        ["action", "class", "reached", "failed", "failure rate", "kinds"],
        summary.byAction.map((row) => [
          escapeHtml(row.actionType),
          escapeHtml(row.interaction),
          String(row.reached),
          String(row.failed),
          pct(row.failureRate),
          escapeHtml(
            Object.entries(row.byKind)
              .map(([kind, count]) => `${FAILURE_KIND_LABELS[kind as keyof typeof FAILURE_KIND_LABELS]} ×${count}`)
              .join(", "),
          ),
        ]),
      ),
    );
  if (summary.unpassedTasks.length === 0) parts.push("<p>Every task was passed (IFS = 100) by at least one cell.</p>");
  else
    parts.push(
      `<p>Tasks no arm passes (no cell reached IFS = 100): ${summary.unpassedTasks.length}.</p>`,
      htmlTable(
        ["task", "site", "class", "cells", "best Final", "best arm", "first failing steps"],
        summary.unpassedTasks.map((row) => [
          String(row.taskId),
          escapeHtml(row.site),
          escapeHtml(`${row.interaction}/${row.visual}`),
          String(row.cells),
          pct(row.bestFinal),
          escapeHtml(row.bestArm),
          escapeHtml(row.kinds),
        ]),
      ),
    );
  if (summary.passedOnlyByCalibration && summary.passedOnlyByCalibration.length > 0)
    parts.push(
      `<p>Tasks passed only by calibration arms (built from the true page): ${escapeHtml(
        summary.passedOnlyByCalibration.map((row) => `${row.taskId} (${row.arms.join(", ")})`).join(", "),
      )}.</p>`,
    );
  return parts.join("\n");
}

/** One row per task: each arm's Final (mean over repeats) and the first repeat's first failing step; no images. */
function perTaskHtml(data: ReportData): string {
  const arms = data.arms.map((arm) => arm.name);
  const byTaskArm = new Map<string, CellScores[]>();
  for (const cell of data.cells) {
    const key = `${cell.taskId}\u0000${cell.arm}`;
    byTaskArm.set(key, [...(byTaskArm.get(key) ?? []), cell]);
  }
  const rows = data.tasks.map((task) => {
    const cells = arms.map((arm) => {
      const mine = (byTaskArm.get(`${task.id}\u0000${arm}`) ?? []).sort((a, b) => a.repeat - b.repeat);
      if (mine.length === 0) return `<td class="miss">–</td>`;
      const final = mine.reduce((total, cell) => total + cell.final, 0) / mine.length;
      const first = mine[0]!;
      const line = failureLine(first);
      return (
        `<td title="${escapeHtml(first.failure?.detail ?? line)}">${pct(final)} ` +
        `<small class="${first.failure ? "no" : "yes"}">${escapeHtml(line)}</small></td>`
      );
    });
    return (
      `<tr data-task-row="${task.id}"><td>${task.id}</td><td>${escapeHtml(task.site)}</td>` +
      `<td>${escapeHtml(`${task.interaction}/${task.visual}`)}</td>${cells.join("")}</tr>`
    );
  });
  return (
    "<h2>Per task</h2><p>Each arm's Final (mean over repeats) and the first repeat's first failing step " +
    "(hover for the judge's or the replay's words).</p>" +
    `<table class="tasks"><thead><tr><th>task</th><th>site</th><th>class</th>${arms.map((arm) => `<th>${escapeHtml(arm)}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table>`
  );
}

/**
 * The worst steps, with small thumbnails: the first failing steps of the lowest-scoring
 * cells, one per task, at most WORST_STEPS_SHOWN. The expected state (the checkpoint after
 * that action, when it has one) beside what the page showed.
 */
async function worstStepsHtml(data: ReportData, thumbs: Map<string, Promise<string>>): Promise<string> {
  const taskById = new Map(data.tasks.map((task) => [task.id, task]));
  const candidates = data.cells
    .filter((cell) => cell.failure && cell.failure.step !== null)
    .sort((a, b) => a.final - b.final || a.taskId - b.taskId || a.arm.localeCompare(b.arm) || a.repeat - b.repeat);
  const seen = new Set<number>();
  const chosen: CellScores[] = [];
  for (const cell of candidates) {
    if (chosen.length >= WORST_STEPS_SHOWN) break;
    if (seen.has(cell.taskId)) continue;
    seen.add(cell.taskId);
    chosen.push(cell);
  }
  if (chosen.length === 0) return "";
  const rows: string[] = [];
  for (const cell of chosen) {
    const failure = cell.failure!;
    const step = failure.step!;
    const task = taskById.get(cell.taskId);
    const checkpoint = task?.actions[step]?.checkpoint;
    const checkpointPath = checkpoint !== null && checkpoint !== undefined ? task?.checkpointPaths[checkpoint] : undefined;
    // The state after the action when it ran (judged No), else the state it failed on.
    const shot = path.join(cell.dir, "evalpoints", `${failure.kind === "judge-no" || failure.kind === "judge-error" ? step + 1 : step}.png`);
    const expected = checkpointPath ? await thumbnail(checkpointPath, thumbs, WORST_STEP_WIDTH) : "";
    const shown = await thumbnail(shot, thumbs, WORST_STEP_WIDTH);
    rows.push(
      `<tr data-worst-step="${cell.taskId}"><td>task ${cell.taskId}<br>${escapeHtml(cell.arm)} r${cell.repeat}<br>Final ${pct(cell.final)}</td>` +
        `<td>${escapeHtml(failureLine(cell))}<br><small>${escapeHtml(failure.detail)}</small></td>` +
        `<td>${expected ? `<img alt="expected after step ${step + 1}" src="${expected}">` : `<span class="miss">no checkpoint for this action</span>`}</td>` +
        `<td>${shown ? `<img alt="page at step ${step + 1}" src="${shown}">` : `<span class="miss">no screenshot</span>`}</td></tr>`,
    );
  }
  return (
    "<h2>The worst steps</h2><p>The first failing step of the lowest-scoring cells, one per task: the expected state (the task's checkpoint " +
    "after that action, when it has one) beside what the page showed.</p>" +
    `<table class="steps"><thead><tr><th>cell</th><th>first failing step</th><th>expected</th><th>page</th></tr></thead><tbody>${rows.join("")}</tbody></table>`
  );
}
