/**
 * The report's three faces: a terminal table per arm, report.md, and a self-contained
 * report.html (no network: images inline as small JPEG data URLs, charts as inline SVG,
 * no script). The HTML shows, per task and checkpoint, the checkpoint beside each arm's
 * screenshot with the step's scores and the judge's verdict.
 */
import fs from "node:fs";
import sharp from "sharp";
import type { ArmSummary, Comparison, FeedbackBound, ReportData } from "./report-data.ts";

const pct = (value: number) => (value * 100).toFixed(1);
const fixed = (value: number | null) => (value === null ? "–" : value.toFixed(3));
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
  return `Final(${c.a}) − Final(${c.b}): ${pct(c.meanDifference)} points over ${c.tasks} task(s), 95 % bootstrap interval [${pct(c.ci95[0])}, ${pct(c.ci95[1])}]`;
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

/** A small JPEG data URL of an image file ("" when it cannot be read). */
async function thumbnail(file: string, cache: Map<string, Promise<string>>): Promise<string> {
  let pending = cache.get(file);
  if (!pending) {
    pending = fs.existsSync(file)
      ? sharp(file)
          .resize({ width: 320, withoutEnlargement: true })
          .jpeg({ quality: 70 })
          .toBuffer()
          .then(
            (jpeg) => `data:image/jpeg;base64,${jpeg.toString("base64")}`,
            () => "",
          )
      : Promise.resolve("");
    cache.set(file, pending);
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
  ".miss{color:#999;font-style:italic}.yes{color:#109618}.no{color:#dc3912}figure{margin:0}figcaption{font-size:12px}h2{margin-top:32px}";

export async function reportHtml(data: ReportData): Promise<string> {
  const thumbs = new Map<string, Promise<string>>();
  const sections: string[] = [];
  sections.push(
    `<h1>${escapeHtml(data.name)}</h1><p>Evaluator: ${escapeHtml(
      Object.entries(data.evaluator)
        .map(([key, value]) => `${key} ${String(value)}`)
        .join(", "),
    )}. Scores in percent. Made ${escapeHtml(data.createdAt)}.</p>`,
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
  sections.push(
    "<h2>Per task and step</h2>" +
      "<p>Each row: the task's checkpoint, then each arm's screenshot at that evalpoint (first repeat), " +
      "with OCR, DINO (or its fallback) and MLLM scores and the judge's verdict on the step's assertion.</p>",
  );
  const arms = data.arms.map((arm) => arm.name);
  for (const task of data.tasks) {
    const cellsOf = new Map(arms.map((arm) => [arm, data.cells.find((cell) => cell.arm === arm && cell.taskId === task.id && cell.repeat === 0)]));
    const positions = [...new Set([...cellsOf.values()].flatMap((cell) => cell?.steps.map((step) => step.position) ?? []))].sort((a, b) => a - b);
    const rows: string[] = [];
    for (const position of positions) {
      const checkpoint = [...cellsOf.values()].flatMap((cell) => cell?.steps.filter((step) => step.position === position) ?? [])[0];
      const cells = [
        `<td><figure><img alt="checkpoint ${position}" src="${await thumbnail(checkpoint?.checkpointPath ?? "", thumbs)}">` +
          `<figcaption>checkpoint ${position}` +
          (checkpoint?.actionIndex !== null && checkpoint?.actionIndex !== undefined ? ` (after action ${checkpoint.actionIndex})` : " (initial)") +
          "</figcaption></figure></td>",
      ];
      for (const arm of arms) {
        const step = cellsOf.get(arm)?.steps.find((entry) => entry.position === position);
        if (!step) {
          cells.push(`<td class="miss">not reached</td>`);
          continue;
        }
        const verdict = step.verdict ? ` · judge <span class="${step.verdict === "Yes" ? "yes" : "no"}">${step.verdict}</span>` : "";
        cells.push(
          `<td><figure><img alt="${escapeHtml(arm)} evalpoint ${position}" src="${await thumbnail(step.evalpointPath, thumbs)}">` +
            `<figcaption>OCR ${pct(step.ocr)} · DINO ${pct(step.dino)} · MLLM ${step.mllm.toFixed(0)}${verdict}</figcaption></figure></td>`,
        );
      }
      rows.push(`<tr data-step-row="${task.id}:${position}">${cells.join("")}</tr>`);
    }
    const finals = arms.map((arm) => `${escapeHtml(arm)} ${pct(cellsOf.get(arm)?.final ?? 0)}`).join(" · ");
    sections.push(
      `<h3>Task ${task.id} — ${escapeHtml(task.site)} (${task.interaction}/${task.visual})</h3><p>Final: ${finals}</p>` +
        `<table class="steps"><thead><tr><th>checkpoint</th>${arms.map((arm) => `<th>${escapeHtml(arm)}</th>`).join("")}</tr></thead>` +
        `<tbody>${rows.join("")}</tbody></table>`,
    );
  }
  const failures = data.cells.filter((cell) => cell.error);
  if (failures.length > 0)
    sections.push(
      `<h2>Failed cells</h2><ul>${failures
        .map((cell) => `<li>${escapeHtml(`${cell.arm} repeat ${cell.repeat} task ${cell.taskId}: ${cell.error}`)}</li>`)
        .join("")}</ul>`,
    );
  sections.push(`<h2>Notes</h2><ul>${data.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("")}</ul>`);
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">` +
    `<title>${escapeHtml(data.name)}</title><style>${STYLE}</style></head><body>${sections.join("\n")}</body></html>\n`
  );
}
