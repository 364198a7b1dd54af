/**
 * The folders of a recording: the task set's `<name>/` beside its jsonl, a hidden working
 * folder the recording is written into, and the move that installs the finished task
 * with its jsonl line (or undoes itself).
 */
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";
import type { TaskLine } from "../tasks/schema.ts";
import { writeTaskLine } from "../tasks/writer.ts";

export function taskFolderFor(data: string): string {
  if (!data.endsWith(".jsonl")) throw new IwrError("CONFIG_INVALID", `--data ${data}: expected a <name>.jsonl path`, { data });
  return data.slice(0, -".jsonl".length);
}

function unwritable(nameDir: string, error: unknown): IwrError {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  return new IwrError("IO", `cannot write the task folder under ${nameDir} (${code}); choose a writable --data location`, { dir: nameDir });
}

/** Makes `<name>/` if needed; says whether it was made here (so a failure can take it away again). */
export function prepareTaskSetFolder(nameDir: string): boolean {
  const existed = fs.existsSync(nameDir);
  try {
    fs.mkdirSync(nameDir, { recursive: true });
    fs.accessSync(nameDir, fs.constants.W_OK);
  } catch (error) {
    throw unwritable(nameDir, error);
  }
  return !existed;
}

/** The hidden working folder beside the target. */
export function makeWorkingFolder(nameDir: string, id: number): string {
  try {
    return fs.mkdtempSync(path.join(nameDir, `.recording-${id}-`));
  } catch (error) {
    throw unwritable(nameDir, error);
  }
}

/** Moves the finished folder into place, then writes the jsonl line; undoes the move if the line fails. */
export function installTask(workDir: string, targetDir: string, jsonl: string, line: TaskLine, replace: boolean): void {
  const previous = fs.existsSync(targetDir) ? `${workDir}.previous` : undefined;
  if (previous) fs.renameSync(targetDir, previous);
  let moved = false;
  try {
    fs.renameSync(workDir, targetDir);
    moved = true;
    writeTaskLine(jsonl, line, { replace });
  } catch (error) {
    if (moved) fs.rmSync(targetDir, { recursive: true, force: true });
    if (previous) fs.renameSync(previous, targetDir);
    throw error;
  }
  if (previous) fs.rmSync(previous, { recursive: true, force: true });
}
