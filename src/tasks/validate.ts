/**
 * Checks one task's folder against its line: the video, the asset sheets, the
 * assets folder, the reference checkpoints, and, when the folder has them, the
 * reference states after every action (`states/`, ours: complete or a problem). Every problem is reported, each
 * naming the path it is about ("tasks/x/7/video.mp4: the video is empty (0 bytes)").
 *
 * Every path must resolve inside the task set's folder once symbolic links are
 * followed: a task whose `assets/` (or any file) points elsewhere, e.g. at /etc, is
 * refused, since the evaluator would serve it to an untrusted page.
 *
 * Without `checkMedia` only the file system is consulted (cheap: sizes, links); with
 * it, the video is probed and decoded to its end, and every PNG is decoded, which is
 * what `iwr tasks validate` does before an expensive run (a folder whose files passed
 * before, byte for byte, is not decoded again: media-checks.ts). What later steps can live
 * with but a researcher should know (a checkpoint of another size than the task's
 * resolution, decode errors in a video that still decodes to its end) is a warning.
 */
import fs from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { errorMessage } from "../errors.ts";
import { checkVideoDecodes } from "../media/decode-check.ts";
import { probeVideo, type VideoInfo } from "../media/probe.ts";
import {
  actionStateFileName,
  actionStateNumber,
  checkpointFileName,
  checkpointStep,
  isSheetFileName,
  sortSheetNames,
  TASK_FILES,
  taskDir,
  taskSetDir,
} from "./layout.ts";
import { keepMediaCheck, keptMediaCheck, mediaCheckKey } from "./media-checks.ts";
import { missingReferenceFiles } from "./reference-files.ts";
import { expectedCheckpointCount, parseResolution, type TaskLine } from "./schema.ts";

/** The files of a task folder that passed every check. */
export interface TaskFiles {
  dir: string;
  videoPath: string;
  sheetPaths: string[];
  assetsDir: string;
  assetFiles: string[];
  checkpointPaths: string[];
  /** `states/action_<i>.png` for i = 1..n, when the folder has a `states/` folder (absent otherwise). */
  actionStatePaths?: string[];
}

export interface FolderCheck {
  files?: TaskFiles;
  /** Set when the video was probed (checkMedia). */
  video?: VideoInfo;
  /** Messages, each starting with the path it is about. */
  problems: string[];
  /** Things to know that do not stop the task (same form). */
  warnings: string[];
}

export interface FolderCheckOptions {
  checkMedia?: boolean;
  /**
   * Check the reference checkpoints (default true). Readers of a task's inputs alone (the
   * self-check, a generator) pass false: a task folder without checkpoints/ serves them.
   */
  needsCheckpoints?: boolean;
  /** The task's resolution as the loader settled it (the line's, or the official fallback); checkpoints are checked against it. */
  resolution?: string;
}

type Entry = { kind: "missing" } | { kind: "file"; size: number } | { kind: "dir" } | { kind: "other" } | { kind: "error"; reason: string };

async function entryAt(target: string): Promise<Entry> {
  try {
    const stats = await fs.stat(target);
    if (stats.isDirectory()) return { kind: "dir" };
    if (stats.isFile()) return { kind: "file", size: stats.size };
    return { kind: "other" };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    return { kind: "error", reason: errorMessage(error) };
  }
}

/** Names of the files in a folder, symbolic links included (hidden files such as .DS_Store left out), sorted. */
async function fileNames(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort();
}

function isInside(folder: string, candidate: string): boolean {
  const relative = path.relative(folder, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * Reports every path of `targets` whose real location (symbolic links followed) lies
 * outside `root`; returns whether all are inside. A dangling link is reported too.
 */
async function checkConfined(root: string, targets: readonly string[], problems: string[]): Promise<boolean> {
  let inside = true;
  for (const target of targets) {
    const real = await fs.realpath(target).catch(() => undefined);
    if (real === undefined) {
      problems.push(`${target}: a symbolic link to nothing (or unreadable)`);
      inside = false;
    } else if (!isInside(root, real)) {
      problems.push(`${target}: resolves to ${real}, outside the task set ${root}; files outside the dataset are never served`);
      inside = false;
    }
  }
  return inside;
}

async function requireFolder(dir: string, what: string, problems: string[], expectation = ""): Promise<boolean> {
  const entry = await entryAt(dir);
  if (entry.kind === "dir") return true;
  if (entry.kind === "missing") problems.push(`${dir}: ${what} is missing${expectation}`);
  else if (entry.kind === "error") problems.push(`${dir}: ${what} cannot be read: ${entry.reason}`);
  else problems.push(`${dir}: ${what} should be a folder, found a file`);
  return false;
}

async function checkVideo(videoPath: string, problems: string[]): Promise<boolean> {
  const entry = await entryAt(videoPath);
  if (entry.kind === "missing") problems.push(`${videoPath}: the video is missing`);
  else if (entry.kind === "error") problems.push(`${videoPath}: the video cannot be read: ${entry.reason}`);
  else if (entry.kind !== "file") problems.push(`${videoPath}: expected a video file, found a folder or special file`);
  else if (entry.size === 0) problems.push(`${videoPath}: the video is empty (0 bytes)`);
  else {
    try {
      await fs.access(videoPath, fs.constants.R_OK);
      return true;
    } catch (error) {
      problems.push(`${videoPath}: the video cannot be read: ${errorMessage(error)}`);
    }
  }
  return false;
}

/** The sheets; none is a problem unless the task has no asset at all (a page that shows no image, recorded with allow_no_images). */
async function checkSheets(sheetsDir: string, assetCount: number, problems: string[], warnings: string[]): Promise<string[]> {
  if (!(await requireFolder(sheetsDir, "the asset sheet folder", problems))) return [];
  const sheets = sortSheetNames((await fileNames(sheetsDir)).filter(isSheetFileName));
  if (sheets.length === 0 && assetCount > 0) problems.push(`${sheetsDir}: no asset sheet (stitched_image*.png) in the folder`);
  if (sheets.length === 0 && assetCount === 0)
    warnings.push(`${sheetsDir}: no asset sheet and no asset: the page shows no image (a generator gets the video alone)`);
  return sheets.map((name) => path.join(sheetsDir, name));
}

function stepList(steps: readonly number[]): string {
  return steps.length === 0 ? "none" : steps.map(checkpointFileName).join(", ");
}

async function checkCheckpoints(checkpointsDir: string, task: TaskLine, problems: string[]): Promise<string[]> {
  const expected = expectedCheckpointCount(task.action_sequence);
  const flagged = expected - 1;
  const range = expected === 1 ? checkpointFileName(0) : `${checkpointFileName(0)}..${checkpointFileName(expected - 1)}`;
  const wanted =
    `${expected} checkpoint${expected === 1 ? "" : "s"} (${range}: the initial state + ` +
    `${flagged} action${flagged === 1 ? "" : "s"} with visual_evaluation_flag)`;
  if (!(await requireFolder(checkpointsDir, "the checkpoints folder", problems, `; expected ${wanted}`))) return [];
  const steps = (await fileNames(checkpointsDir))
    .map(checkpointStep)
    .filter((step): step is number => step !== undefined)
    .sort((a, b) => a - b);
  const complete = steps.length === expected && steps.every((step, index) => step === index);
  if (!complete) {
    problems.push(`${checkpointsDir}: expected ${wanted}, found ${steps.length} (${stepList(steps)})`);
    return [];
  }
  return steps.map((step) => path.join(checkpointsDir, checkpointFileName(step)));
}

/**
 * The states after every action, when the task has a `states/` folder: exactly
 * action_1.png..action_<n>.png for the line's n actions. Undefined when there is no such
 * folder (the benchmark's own tasks, older recordings); [] after a problem.
 */
async function checkActionStates(statesDir: string, task: TaskLine, problems: string[], warnings: string[]): Promise<string[] | undefined> {
  const entry = await entryAt(statesDir);
  if (entry.kind === "missing") return undefined;
  if (!(await requireFolder(statesDir, "the reference states folder", problems))) return [];
  const actions = task.action_sequence.length;
  const names = await fileNames(statesDir);
  for (const name of names.filter((file) => actionStateNumber(file) === undefined)) {
    warnings.push(`${path.join(statesDir, name)}: not a reference state (action_<i>.png); ignored`);
  }
  const numbers = names
    .map(actionStateNumber)
    .filter((number): number is number => number !== undefined)
    .sort((a, b) => a - b);
  const complete = numbers.length === actions && numbers.every((number, index) => number === index + 1);
  if (!complete) {
    const found = numbers.length === 0 ? "none" : numbers.map(actionStateFileName).join(", ");
    problems.push(
      `${statesDir}: expected the state after each of the ${actions} action${actions === 1 ? "" : "s"} ` +
        `(${actionStateFileName(1)}${actions > 1 ? `..${actionStateFileName(actions)}` : ""}), found ${numbers.length} (${found})`,
    );
    return [];
  }
  return numbers.map((number) => path.join(statesDir, actionStateFileName(number)));
}

/** Empty files cannot be images: found without decoding anything. */
async function checkNotEmpty(files: readonly string[], what: string, problems: string[]): Promise<void> {
  for (const file of files) {
    const entry = await entryAt(file);
    if (entry.kind === "file" && entry.size === 0) problems.push(`${file}: the ${what} is empty (0 bytes)`);
  }
}

/** Decodes every PNG whole (a truncated one has a readable header); checkpoints of another size than the task's are a warning. */
async function checkImages(files: readonly string[], problems: string[], warnings: string[], expected?: { width: number; height: number }): Promise<void> {
  for (const file of files) {
    try {
      const { info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
      if (expected && (info.width !== expected.width || info.height !== expected.height)) {
        warnings.push(
          `${file}: ${info.width}x${info.height}, not the task's resolution ${expected.width}x${expected.height} ` +
            "(the evaluator compares it with screenshots of that size)",
        );
      }
    } catch (error) {
      problems.push(`${file}: not a readable image: ${errorMessage(error)}`);
    }
  }
}

export async function checkTaskFolder(jsonlPath: string, task: TaskLine, options: FolderCheckOptions = {}): Promise<FolderCheck> {
  const dir = taskDir(jsonlPath, task.id);
  const problems: string[] = [];
  const warnings: string[] = [];
  if (!(await requireFolder(dir, "the task folder", problems))) return { problems, warnings };
  const root = await fs.realpath(taskSetDir(jsonlPath));
  if (!(await checkConfined(root, [dir], problems))) return { problems, warnings };

  const videoPath = path.join(dir, TASK_FILES.video);
  const videoPresent = await checkVideo(videoPath, problems);
  const assetsDir = path.join(dir, TASK_FILES.assetsDir);
  const assetFiles = (await requireFolder(assetsDir, "the assets folder", problems)) ? await fileNames(assetsDir) : [];
  const sheetsDir = path.join(dir, TASK_FILES.sheetsDir);
  const sheetPaths = await checkSheets(sheetsDir, assetFiles.length, problems, warnings);
  const checkpointsDir = path.join(dir, TASK_FILES.checkpointsDir);
  const checkpointPaths = options.needsCheckpoints === false ? [] : await checkCheckpoints(checkpointsDir, task, problems);
  // Truth like the checkpoints: readers of the inputs alone do not look at it.
  const statesDir = path.join(dir, TASK_FILES.statesDir);
  const actionStatePaths = options.needsCheckpoints === false ? undefined : await checkActionStates(statesDir, task, problems, warnings);
  // lstat: a dangling link is there (and gets reported), not missing.
  const present = (target: string) =>
    fs.lstat(target).then(
      () => true,
      () => false,
    );
  const linked = [
    videoPath,
    sheetsDir,
    ...sheetPaths,
    assetsDir,
    ...assetFiles.map((name) => path.join(assetsDir, name)),
    ...(options.needsCheckpoints === false ? [] : [checkpointsDir]),
    ...checkpointPaths,
    ...(actionStatePaths ? [statesDir, ...actionStatePaths] : []),
  ];
  const existing: string[] = [];
  for (const target of linked) if (await present(target)) existing.push(target);
  // Nothing outside the dataset is opened, not even to check it.
  const confined = await checkConfined(root, existing, problems);
  await checkNotEmpty(checkpointPaths, "checkpoint", problems);
  await checkNotEmpty(actionStatePaths ?? [], "reference state", problems);
  await checkNotEmpty(sheetPaths, "asset sheet", problems);

  let video: VideoInfo | undefined;
  if (options.checkMedia && confined) {
    // The same bytes checked before without a problem are not decoded again (media-checks.ts).
    const checkedPictures = [...checkpointPaths, ...(actionStatePaths ?? [])];
    const decodedFiles = [...(videoPresent ? [videoPath] : []), ...sheetPaths, ...(options.resolution ? checkedPictures : [])];
    const key = problems.length === 0 ? await mediaCheckKey(decodedFiles, options.resolution) : undefined;
    const kept = key ? await keptMediaCheck(key) : undefined;
    if (kept) {
      warnings.push(...kept.warnings);
      video = kept.video;
      problems.push(...(await missingReferenceFiles(dir, assetsDir)));
    } else {
      const before = { problems: problems.length, warnings: warnings.length };
      if (videoPresent) {
        try {
          video = await probeVideo(videoPath);
          const decoded = await checkVideoDecodes(videoPath, video.durationSec, video.fps);
          if (decoded.problem) problems.push(decoded.problem);
          if (decoded.warning) warnings.push(decoded.warning);
        } catch (error) {
          problems.push(errorMessage(error));
        }
      }
      await checkImages(sheetPaths, problems, warnings);
      const unreferenced = await missingReferenceFiles(dir, assetsDir);
      problems.push(...unreferenced);
      if (options.resolution) await checkImages(checkedPictures, problems, warnings, parseResolution(options.resolution));
      const mediaProblems = problems.length - before.problems - unreferenced.length;
      if (key && mediaProblems === 0) await keepMediaCheck(key, { warnings: warnings.slice(before.warnings), ...(video ? { video } : {}) });
    }
  }

  if (problems.length > 0) return { problems, warnings, ...(video ? { video } : {}) };
  const files: TaskFiles = { dir, videoPath, sheetPaths, assetsDir, assetFiles, checkpointPaths, ...(actionStatePaths ? { actionStatePaths } : {}) };
  return { files, problems, warnings, ...(video ? { video } : {}) };
}
