/**
 * Loads a task set in the official dataset layout, unchanged (see layout.ts), into
 * `Task` objects split into `inputs` (what a generator may see) and `truth` (what
 * only the evaluator may see).
 *
 * `loadTaskSet` reports every problem and returns the tasks that passed; `loadTasks`
 * is the strict form for runs: any problem and it throws one IwrError("TASK_INVALID")
 * that lists them all.
 */
import fs from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";
import { determinismFromLine } from "../browser/determinism.ts";
import { errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";
import type { VideoInfo } from "../media/probe.ts";
import type { TaskInputs } from "./inputs.ts";
import { readTaskLines, type TaskLineEntry } from "./jsonl.ts";
import { taskDir } from "./layout.ts";
import { sortProblems, type TaskProblem, taskProblemsError } from "./problems.ts";
import { parseResolution, ResolutionString, type Task, type TaskLine, type TaskTruth, UNKNOWN_CLASS } from "./schema.ts";
import { checkTaskFolder, type TaskFiles } from "./validate.ts";

export interface LoadOptions {
  /** Probe every video with ffprobe and read every PNG header (slower, thorough). Default false. */
  checkMedia?: boolean;
  /** Require the reference checkpoints (default true); false for readers of the inputs alone, whose tasks get none. */
  needsCheckpoints?: boolean;
  /**
   * A line without recording_details.resolution: `harness` falls back as the harness's
   * generation does (the task folder's metadata.json, then 1920x1080) and says so in a
   * warning (the official profile); `refuse` (default) makes it a problem.
   */
  resolutionFallback?: "harness" | "refuse";
}

/** The harness's last resort (core.py get_resolution). */
export const HARNESS_DEFAULT_RESOLUTION = "1920x1080";

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

/** The line's resolution, or the harness's fallback with where it came from; undefined when refused. */
async function resolutionOf(
  task: TaskLine,
  dir: string,
  fallback: LoadOptions["resolutionFallback"],
): Promise<{ resolution?: string; problem?: string; warning?: string }> {
  const own = task.recording_details?.resolution;
  if (own) return { resolution: own };
  if (fallback !== "harness") {
    return {
      problem:
        "recording_details.resolution: missing " +
        "(the official profile falls back to the task folder's metadata.json, then 1920x1080, as the harness's generation does)",
    };
  }
  const metadataFile = path.join(dir, "metadata.json");
  let text: string | undefined;
  try {
    text = await fs.readFile(metadataFile, "utf8");
  } catch {
    return {
      resolution: HARNESS_DEFAULT_RESOLUTION,
      warning: `recording_details.resolution: missing and no ${metadataFile}; using ${HARNESS_DEFAULT_RESOLUTION}, as the harness does`,
    };
  }
  let metadata: unknown;
  try {
    metadata = JSON.parse(text);
  } catch (error) {
    return { problem: `${metadataFile}: not valid JSON (${errorMessage(error)}), and the line has no recording_details.resolution` };
  }
  const details = typeof metadata === "object" && metadata !== null ? (metadata as { recording_details?: unknown }).recording_details : undefined;
  const fromFile = typeof details === "object" && details !== null ? (details as { resolution?: unknown }).resolution : undefined;
  if (fromFile === undefined)
    return {
      resolution: HARNESS_DEFAULT_RESOLUTION,
      warning: `recording_details.resolution: missing, and ${metadataFile} names none; using ${HARNESS_DEFAULT_RESOLUTION}, as the harness does`,
    };
  const checked = ResolutionString.safeParse(fromFile);
  if (!checked.success) return { problem: `${metadataFile}: recording_details.resolution: ${checked.error.issues[0]?.message ?? "invalid"}` };
  return { resolution: checked.data, warning: `recording_details.resolution: missing; using ${checked.data} from ${metadataFile}, as the harness does` };
}

function buildTask(task: TaskLine, files: TaskFiles, resolution: string): Task {
  const absolute = (file: string): string => path.resolve(file);
  const inputs: TaskInputs = Object.freeze({
    id: task.id,
    videoPath: absolute(files.videoPath),
    assetSheetPaths: Object.freeze(files.sheetPaths.map(absolute)),
    assetsDir: absolute(files.assetsDir),
    assetFiles: Object.freeze([...files.assetFiles]),
    resolution: Object.freeze(parseResolution(resolution)),
  });
  const truth: TaskTruth = Object.freeze({
    id: task.id,
    actions: Object.freeze([...task.action_sequence]),
    checkpointPaths: Object.freeze(files.checkpointPaths.map(absolute)),
    ...(files.actionStatePaths && files.checkpointPaths[0]
      ? { actionStatePaths: Object.freeze([files.checkpointPaths[0], ...files.actionStatePaths].map(absolute)) }
      : {}),
    ...(task.determinism ? { determinism: Object.freeze(determinismFromLine(task.determinism)) } : {}),
  });
  const classification = task.classification ?? {};
  return {
    id: task.id,
    dir: absolute(files.dir),
    setDir: absolute(path.dirname(files.dir)),
    line: task,
    meta: {
      id: task.id,
      interactionComplexity: classification.interaction_complexity ?? UNKNOWN_CLASS,
      visualComplexity: classification.visual_complexity ?? UNKNOWN_CLASS,
      domain: classification.domain ?? UNKNOWN_CLASS,
      ...(classification.sub_domain !== undefined ? { subDomain: classification.sub_domain } : {}),
      sourceWebsite: task.source_website ?? UNKNOWN_CLASS,
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
  const located = (message: string): TaskProblem => ({ file, line: entry.line, taskId: entry.task.id, message });
  const resolution = await resolutionOf(entry.task, taskDir(file, entry.task.id), options.resolutionFallback);
  const check = await checkTaskFolder(file, entry.task, { ...options, ...(resolution.resolution ? { resolution: resolution.resolution } : {}) });
  const problems = [...(resolution.problem ? [resolution.problem] : []), ...check.problems].map(located);
  return {
    ...(check.files && problems.length === 0 && resolution.resolution ? { task: buildTask(entry.task, check.files, resolution.resolution) } : {}),
    ...(check.video ? { video: check.video } : {}),
    problems,
    warnings: [...(resolution.warning ? [resolution.warning] : []), ...check.warnings].map(located),
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
  const warnings: TaskProblem[] = [...lines.warnings];
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
