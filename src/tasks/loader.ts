/**
 * Loads a task set in the official dataset layout, unchanged (see layout.ts), into
 * `Task` objects split into `inputs` (what a generator may see) and `truth` (what
 * only the evaluator may see).
 *
 * `loadTaskSet` reports every problem and returns the tasks that passed; `loadTasks`
 * is the strict form for runs: any problem and it throws one IwrError("TASK_INVALID")
 * that lists them all.
 */
import path from "node:path";
import pLimit from "p-limit";
import { log } from "../log/logger.ts";
import type { VideoInfo } from "../media/probe.ts";
import { readTaskLines, type TaskLineEntry } from "./jsonl.ts";
import { sortProblems, taskProblemsError, type TaskProblem } from "./problems.ts";
import { parseResolution, type Task, type TaskInputs, type TaskLine, type TaskTruth } from "./schema.ts";
import { checkTaskFolder, type TaskFiles } from "./validate.ts";

export interface LoadOptions {
  /** Probe every video with ffprobe and read every PNG header (slower, thorough). Default false. */
  checkMedia?: boolean;
  /** Require the reference checkpoints (default true); false for readers of the inputs alone, whose tasks get none. */
  needsCheckpoints?: boolean;
}

export interface TaskSet {
  /** Tasks that passed every check, in file order. */
  tasks: Task[];
  /** Every problem found, in file order. */
  problems: TaskProblem[];
  /** Things to know that do not stop a task (e.g. a checkpoint of another size), in file order. */
  warnings: TaskProblem[];
  /** Probe results by task id (only with checkMedia). */
  videos: Map<number, VideoInfo>;
}

/** Folder checks touch the disk and, with checkMedia, start ffprobe: a few at a time. */
const FOLDER_CHECK_CONCURRENCY = 2;

const logger = log("tasks");

function buildTask(task: TaskLine, files: TaskFiles): Task {
  const absolute = (file: string): string => path.resolve(file);
  const inputs: TaskInputs = Object.freeze({
    id: task.id,
    videoPath: absolute(files.videoPath),
    assetSheetPaths: Object.freeze(files.sheetPaths.map(absolute)),
    assetsDir: absolute(files.assetsDir),
    assetFiles: Object.freeze([...files.assetFiles]),
    resolution: Object.freeze(parseResolution(task.recording_details.resolution)),
  });
  const truth: TaskTruth = Object.freeze({
    id: task.id,
    actions: Object.freeze([...task.action_sequence]),
    checkpointPaths: Object.freeze(files.checkpointPaths.map(absolute)),
  });
  const { classification } = task;
  return {
    id: task.id,
    dir: absolute(files.dir),
    setDir: absolute(path.dirname(files.dir)),
    line: task,
    meta: {
      id: task.id,
      interactionComplexity: classification.interaction_complexity,
      visualComplexity: classification.visual_complexity,
      domain: classification.domain,
      ...(classification.sub_domain !== undefined ? { subDomain: classification.sub_domain } : {}),
      sourceWebsite: task.source_website,
    },
    inputs,
    truth,
  };
}

interface EntryOutcome {
  task?: Task;
  video?: VideoInfo;
  problems: TaskProblem[];
  warnings: TaskProblem[];
}

async function loadEntry(file: string, entry: TaskLineEntry, options: LoadOptions): Promise<EntryOutcome> {
  const check = await checkTaskFolder(file, entry.task, options);
  const located = (message: string): TaskProblem => ({ file, line: entry.line, taskId: entry.task.id, message });
  const problems = check.problems.map(located);
  return {
    ...(check.files && problems.length === 0 ? { task: buildTask(entry.task, check.files) } : {}),
    ...(check.video ? { video: check.video } : {}),
    problems,
    warnings: check.warnings.map(located),
  };
}

export async function loadTaskSet(jsonlPath: string, options: LoadOptions = {}): Promise<TaskSet> {
  const lines = await readTaskLines(jsonlPath);
  logger.debug(`read ${lines.entries.length} well-formed task line(s) from ${jsonlPath}`);
  const limit = pLimit(FOLDER_CHECK_CONCURRENCY);
  const outcomes = await Promise.all(lines.entries.map((entry) => limit(() => loadEntry(jsonlPath, entry, options))));

  const tasks: Task[] = [];
  const videos = new Map<number, VideoInfo>();
  const problems: TaskProblem[] = [...lines.problems];
  const warnings: TaskProblem[] = [];
  for (const outcome of outcomes) {
    if (outcome.task) tasks.push(outcome.task);
    if (outcome.task && outcome.video) videos.set(outcome.task.id, outcome.video);
    problems.push(...outcome.problems);
    warnings.push(...outcome.warnings);
  }
  logger.debug(`loaded ${tasks.length} task(s) from ${jsonlPath}; ${problems.length} problem(s), ${warnings.length} warning(s)`);
  return { tasks, problems: sortProblems(problems), warnings: sortProblems(warnings), videos };
}

/** Every task of the file, or one IwrError("TASK_INVALID") listing every problem. */
export async function loadTasks(jsonlPath: string, options: LoadOptions = {}): Promise<Task[]> {
  const set = await loadTaskSet(jsonlPath, options);
  if (set.problems.length > 0) throw taskProblemsError(jsonlPath, set.problems);
  return set.tasks;
}
