/**
 * report.html, self-contained (no network: images inline as small JPEG data URLs, charts as
 * inline SVG, no script). It keeps the summaries, one row per task and the worst steps (each
 * beside the task's checkpoint); `iwr view` shows every cell, step and image.
 */

import { FAILED_CELLS_LISTED, failureSummaryHtml, perTaskHtml, worstStepsHtml } from "./render-html-failures.ts";
import {
  ARM_COLUMNS,
  BOUND_INTRO,
  boundRows,
  differenceLine,
  escapeHtml,
  fixed,
  htmlTable,
  isOracleArm,
  judgeNoiseLine,
  ORACLE_NOTE,
  pct,
  viewCommand,
} from "./render-shared.ts";
import type { ReportData } from "./report-data.ts";
import { barChart, xyChart } from "./svg-charts.ts";

const shortText = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);

const STYLE =
  "body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 20px}" +
  "th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}" +
  "th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}\n" +
  ".steps td{vertical-align:top;text-align:left}.steps img{width:240px;display:block;border:1px solid #999}" +
  ".tasks td{white-space:nowrap}.tasks small{font-size:11px}.view-hint{background:#f4f7fb;border-left:3px solid #3366cc;padding:6px 10px}" +
  ".miss{color:#999;font-style:italic}.yes{color:#109618}.no{color:#dc3912}figure{margin:0}figcaption{font-size:12px}h2{margin-top:32px}";

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
