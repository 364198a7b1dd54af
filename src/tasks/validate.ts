/**
 * Checks one task's folder against its line: the video, the asset sheets, the
 * assets folder and the reference checkpoints. Every problem is reported, each
 * naming the path it is about ("tasks/x/7/video.mp4: the video is empty (0 bytes)").
 *
 * Without `checkMedia` only the file system is consulted (cheap); with it, the video
 * is probed with ffprobe and every PNG's header is read, which is what
 * `iwr tasks validate` does before an expensive run.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { errorMessage } from "../errors.ts";
import { probeImage, probeVideo, type VideoInfo } from "../media/probe.ts";
import { TASK_FILES, checkpointFileName, checkpointStep, isSheetFileName, sortSheetNames, taskDir } from "./layout.ts";
import { expectedCheckpointCount, type TaskLine } from "./schema.ts";

/** The files of a task folder that passed every check. */
export interface TaskFiles {
  dir: string;
  videoPath: string;
  sheetPaths: string[];
  assetsDir: string;
  assetFiles: string[];
  checkpointPaths: string[];
}

export interface FolderCheck {
  files?: TaskFiles;
  /** Set when the video was probed (checkMedia). */
  video?: VideoInfo;
  /** Messages, each starting with the path it is about. */
  problems: string[];
}

export interface FolderCheckOptions {
  checkMedia?: boolean;
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

/** Names of the plain files in a folder (hidden files such as .DS_Store left out), sorted. */
async function fileNames(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort();
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

async function checkSheets(sheetsDir: string, problems: string[]): Promise<string[]> {
  if (!(await requireFolder(sheetsDir, "the asset sheet folder", problems))) return [];
  const sheets = sortSheetNames((await fileNames(sheetsDir)).filter(isSheetFileName));
  if (sheets.length === 0) problems.push(`${sheetsDir}: no asset sheet (stitched_image*.png) in the folder`);
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

/** Reads every PNG's header; an unreadable one becomes a problem. */
async function checkImages(files: readonly string[], problems: string[]): Promise<void> {
  for (const file of files) {
    try {
      await probeImage(file);
    } catch (error) {
      problems.push(errorMessage(error));
    }
  }
}

export async function checkTaskFolder(jsonlPath: string, task: TaskLine, options: FolderCheckOptions = {}): Promise<FolderCheck> {
  const dir = taskDir(jsonlPath, task.id);
  const problems: string[] = [];
  if (!(await requireFolder(dir, "the task folder", problems))) return { problems };

  const videoPath = path.join(dir, TASK_FILES.video);
  const videoPresent = await checkVideo(videoPath, problems);
  const sheetPaths = await checkSheets(path.join(dir, TASK_FILES.sheetsDir), problems);
  const assetsDir = path.join(dir, TASK_FILES.assetsDir);
  const assetFiles = (await requireFolder(assetsDir, "the assets folder", problems)) ? await fileNames(assetsDir) : [];
  const checkpointPaths = await checkCheckpoints(path.join(dir, TASK_FILES.checkpointsDir), task, problems);

  let video: VideoInfo | undefined;
  if (options.checkMedia) {
    if (videoPresent) {
      try {
        video = await probeVideo(videoPath);
      } catch (error) {
        problems.push(errorMessage(error));
      }
    }
    await checkImages([...sheetPaths, ...checkpointPaths], problems);
  }

  if (problems.length > 0) return { problems, ...(video ? { video } : {}) };
  return { files: { dir, videoPath, sheetPaths, assetsDir, assetFiles, checkpointPaths }, problems, ...(video ? { video } : {}) };
}
