/**
 * What `iwr tasks validate`, `iwr tasks list` and `npm start` print. Each function
 * returns the process exit code (0 all good, 1 any problem) and never exits itself.
 * Warnings are printed apart from problems and do not change the exit code.
 */
import fs from "node:fs";
import { log } from "../log/logger.ts";
import type { VideoInfo } from "../media/probe.ts";
import { loadTaskSet, type TaskSet } from "../tasks/loader.ts";
import { formatProblem, type TaskProblem } from "../tasks/problems.ts";
import type { Task } from "../tasks/schema.ts";

export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

const standardOutput: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

const logger = log("tasks");

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** A plain-text table: text columns left-aligned, number columns right-aligned. */
function renderTable(header: readonly string[], rows: readonly string[][], numeric: readonly boolean[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const renderRow = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [renderRow(header), renderRow(widths.map((width) => "-".repeat(width))), ...rows.map(renderRow)].join("\n");
}

/** id, domain, L/V class, actions, video length, assets: one row per task. */
export function formatTaskTable(tasks: readonly Task[], videos: ReadonlyMap<number, VideoInfo>): string {
  const rows = tasks.map((task) => {
    const domain = task.meta.subDomain ? `${task.meta.domain}/${task.meta.subDomain}` : task.meta.domain;
    const video = videos.get(task.id);
    return [
      String(task.id),
      domain,
      `${task.meta.interactionComplexity}/${task.meta.visualComplexity}`,
      String(task.truth.actions.length),
      video ? video.durationSec.toFixed(1) : "?",
      String(task.inputs.assetFiles.length),
    ];
  });
  return renderTable(["id", "domain", "class", "actions", "video (s)", "assets"], rows, [true, false, false, true, true, true]);
}

function printProblems(problems: readonly TaskProblem[], write: (text: string) => void): void {
  for (const problem of problems) write(formatProblem(problem));
}

/** Warnings apart from problems: they do not fail the check, but a researcher should read them. */
function printWarnings(set: TaskSet, write: (text: string) => void): void {
  if (set.warnings.length === 0) return;
  write(`${plural(set.warnings.length, "warning")}:`);
  for (const warning of set.warnings) write(`  warning: ${formatProblem(warning)}`);
}

export interface ValidateOptions {
  /** Probe videos and read PNG headers (default true). */
  checkMedia?: boolean;
  /** A line without a resolution: the harness's fallback (official) or a problem (corrected). */
  resolutionFallback?: "harness" | "refuse";
}

/** `iwr tasks validate`: every problem on stdout, then a one-line verdict. */
export async function validateTaskFile(jsonlPath: string, options: ValidateOptions = {}, io: Output = standardOutput): Promise<number> {
  const started = Date.now();
  const set = await loadTaskSet(jsonlPath, {
    checkMedia: options.checkMedia ?? true,
    ...(options.resolutionFallback ? { resolutionFallback: options.resolutionFallback } : {}),
  });
  logger.info(`checked ${jsonlPath} in ${Date.now() - started} ms`);
  printWarnings(set, io.out);
  if (set.problems.length === 0) {
    io.out(`${plural(set.tasks.length, "task")} OK${set.warnings.length > 0 ? ` (${plural(set.warnings.length, "warning")})` : ""}`);
    return 0;
  }
  printProblems(set.problems, io.out);
  io.out(`${plural(set.problems.length, "problem")} in ${jsonlPath}; ${plural(set.tasks.length, "task")} OK`);
  return 1;
}

/** `iwr tasks list`: the table of loadable tasks on stdout; any problems on stderr. */
export async function listTaskFile(jsonlPath: string, io: Output = standardOutput): Promise<number> {
  const set = await loadTaskSet(jsonlPath, { checkMedia: true });
  if (set.tasks.length > 0) io.out(formatTaskTable(set.tasks, set.videos));
  if (set.problems.length === 0) return 0;
  printProblems(set.problems, io.err);
  io.err(`${plural(set.problems.length, "problem")} in ${jsonlPath}: run \`iwr tasks validate ${jsonlPath}\` after fixing them`);
  return 1;
}

/** `npm start` (until the runner exists): validate the bundled suite and list it. */
export async function validateAndList(jsonlPath: string, io: Output = standardOutput): Promise<number> {
  if (!fs.existsSync(jsonlPath)) {
    io.err(`no bundled suite at ${jsonlPath}: run npm run tasks:build`);
    return 1;
  }
  const set = await loadTaskSet(jsonlPath, { checkMedia: true });
  if (set.tasks.length > 0) io.out(formatTaskTable(set.tasks, set.videos));
  printWarnings(set, io.err);
  if (set.problems.length === 0) {
    io.out(`${plural(set.tasks.length, "task")} OK in ${jsonlPath}`);
    return 0;
  }
  printProblems(set.problems, io.err);
  io.err(`${plural(set.problems.length, "problem")} in ${jsonlPath}; ${plural(set.tasks.length, "task")} OK`);
  return 1;
}
