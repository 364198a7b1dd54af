/**
 * report.html, self-contained (no network: images inline as small JPEG data URLs, charts as
 * inline SVG, no script). It keeps the summaries, one row per task and the worst steps (each
 * beside the task's checkpoint); `iwr view` shows every cell, step and image.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { FAILURE_KIND_LABELS } from "./failures.ts";
import {
  ARM_COLUMNS,
  BOUND_INTRO,
  boundRows,
  differenceLine,
  escapeHtml,
  fixed,
  isOracleArm,
  judgeNoiseLine,
  ORACLE_NOTE,
  pct,
  viewCommand,
} from "./render-shared.ts";
import type { CellScores, ReportData } from "./report-data.ts";
import { barChart, xyChart } from "./svg-charts.ts";

const shortText = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);

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
