/**
 * report.html's part on what failed: the failure summary with the failed cells, one row
 * per task, and the worst steps, each beside the task's checkpoint as a small inline JPEG.
 * render-html.ts puts them after the summaries.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { FAILURE_KIND_LABELS } from "./failures.ts";
import { escapeHtml, htmlTable, pct } from "./render-shared.ts";
import type { CellScores, ReportData } from "./report-data.ts";

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

/** At most this many failed cells are listed in report.html (report.md lists them all). */
export const FAILED_CELLS_LISTED = 50;
/** The worst steps shown with thumbnails: a fixed number, so the file does not grow with the run. */
const WORST_STEPS_SHOWN = 8;

function failureLine(cell: Pick<CellScores, "failure">): string {
  const failure = cell.failure;
  if (!failure) return "passed";
  const where = failure.step === null ? "" : `step ${failure.step + 1}${failure.actionType ? ` (${failure.actionType})` : ""}: `;
  return `${where}${FAILURE_KIND_LABELS[failure.kind]}`;
}

export function failureSummaryHtml(data: ReportData): string {
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
export function perTaskHtml(data: ReportData): string {
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
export async function worstStepsHtml(data: ReportData, thumbs: Map<string, Promise<string>>): Promise<string> {
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
