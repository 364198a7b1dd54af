/**
 * What `iwr`'s exit status means, for scripts and schedulers (documented in the README):
 *
 *   0  everything asked for was done
 *   1  the run finished, but one or more tasks failed (each error is recorded beside its
 *      task; the closing line says how many and where), or validation found problems
 *   2  usage error: an unknown flag, a bad option value, an unusable name, an invalid
 *      task file or config, a folder another run is using (it is named). Nothing was run.
 *   3  the run could not start or broke down: a tool missing (Chromium, ffmpeg), an
 *      endpoint unreachable or refusing the key, a results folder that cannot be written
 */
import { IwrError } from "../errors.ts";

export const EXIT_CODES = Object.freeze({ ok: 0, taskFailures: 1, usage: 2, broken: 3 });

/** Errors that mean the command was asked for something it cannot do as given. */
const USAGE_CODES = new Set<string>(["CONFIG_INVALID", "TASK_INVALID", "FOLDER_LOCKED"]);

export function exitCodeForError(error: unknown): number {
  return error instanceof IwrError && USAGE_CODES.has(error.code) ? EXIT_CODES.usage : EXIT_CODES.broken;
}

/** Exit status of a run that finished: 1 when any of its tasks failed. */
export function exitCodeForRun(failedTasks: number): number {
  return failedTasks > 0 ? EXIT_CODES.taskFailures : EXIT_CODES.ok;
}
