/**
 * One run per folder. A command that writes a run or results folder holds a lock file in it
 * while it works: `run.lock` in an experiment's run folder, `<model-dir>.lock` in a results
 * folder for the model whose pages it makes or scores. The lock records who holds it: pid,
 * host, start time and command. A second command on the same folder is refused, naming the
 * first: two runs on one folder delete and rewrite each other's pages and records.
 *
 * - A lock whose holder on this host is no longer running (killed, crashed: its lock stayed)
 *   is taken over, with a warning naming the dead holder.
 * - A lock held on another host cannot be checked from here: refused, naming both hosts.
 *   Remove the file by hand once that machine's run is known to be gone.
 *
 * Taking the lock is atomic: the record is written to a temp file and hard-linked to the
 * lock's name, which fails when the name exists. The lock is removed when released and, as
 * a last resort, when the process exits.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { isProcessAlive, tempPathBeside } from "./atomic.ts";

const LockRecordSchema = z.object({ pid: z.number().int().positive(), host: z.string(), startedAt: z.string(), command: z.string() });
export type LockRecord = z.infer<typeof LockRecordSchema>;

export interface FolderLock {
  readonly file: string;
  /** Removes the lock (when it is still this process's). */
  release(): void;
}

/** Locks held by this process, removed at exit if their holder forgot. */
const held = new Set<string>();
let exitHookInstalled = false;

function describeHolder(holder: LockRecord): string {
  return `pid ${holder.pid} on host ${holder.host}, started ${holder.startedAt} (${holder.command})`;
}

function readHolder(file: string): LockRecord | undefined {
  try {
    const checked = LockRecordSchema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
    return checked.success ? checked.data : undefined;
  } catch {
    return undefined;
  }
}

/** Removes our lock file if it still holds our record. */
function removeIfOurs(file: string, ours: string): void {
  try {
    if (fs.readFileSync(file, "utf8") === ours) fs.rmSync(file, { force: true });
  } catch {
    // Gone already.
  }
  held.delete(file);
}

/**
 * Takes the lock `name` in `dir` for `command` (e.g. "iwr run configs/x.yaml"); `what` names
 * the folder in messages ("run folder", "results folder for model gpt-4o"). Throws
 * IwrError("FOLDER_LOCKED") naming the holder when another live run has it.
 */
export function lockFolder(dir: string, options: { name: string; command: string; what: string }): FolderLock {
  // A folder made here only to hold the lock is removed with it when nothing else was written (a run refused before any work).
  const made = fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, options.name);
  const record: LockRecord = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString(), command: options.command };
  const text = `${JSON.stringify(record, null, 2)}\n`;
  const temp = tempPathBeside(file);
  fs.writeFileSync(temp, text);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        fs.linkSync(temp, file);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST")
          throw new IwrError("IO", `cannot lock ${dir}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}`, { file });
      }
      const holder = readHolder(file);
      const stale = holder !== undefined && holder.host === record.host && holder.pid !== process.pid && !isProcessAlive(holder.pid);
      if (!stale || attempt > 0) throw refusal(file, dir, options.what, holder);
      log("files").warn(`${file}: taking over the lock of a run that is no longer running (${describeHolder(holder)})`);
      // Only that stale record is removed: a run that took the lock over meanwhile keeps its own.
      const again = readHolder(file);
      if (again?.pid === holder.pid && again.startedAt === holder.startedAt) fs.rmSync(file, { force: true });
    }
  } finally {
    fs.rmSync(temp, { force: true });
  }
  held.add(file);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const lock of held) {
        try {
          if (readHolder(lock)?.pid === process.pid) fs.rmSync(lock, { force: true });
        } catch {
          // Nothing more can be done at exit.
        }
      }
    });
  }
  return {
    file,
    release: () => {
      removeIfOurs(file, text);
      if (made !== undefined) removeEmptyFolders(path.resolve(made), dir);
    },
  };
}

/** Removes `dir` and its parents up to `top` (the first folder mkdir made) while they are empty. */
function removeEmptyFolders(top: string, dir: string): void {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    try {
      fs.rmdirSync(current);
    } catch {
      return;
    }
    if (current === top || path.dirname(current) === current) return;
  }
}

function refusal(file: string, dir: string, what: string, holder: LockRecord | undefined): IwrError {
  if (!holder)
    return new IwrError(
      "FOLDER_LOCKED",
      `${dir} (${what}) is locked by ${file}, which cannot be read: if no run is using the folder, remove that file and try again`,
      { file },
    );
  const here = os.hostname();
  const message =
    holder.host === here
      ? `${dir} (${what}) is in use by another run: ${describeHolder(holder)}. Wait for it to finish or stop it; ` +
        "two runs on one folder would overwrite each other's pages and records"
      : `${dir} (${what}) is in use by a run on another machine: ${describeHolder(holder)}; this is host ${here}. ` +
        `Its liveness cannot be checked from here: if that run is gone, remove ${file} and try again`;
  return new IwrError("FOLDER_LOCKED", message, { file, holder });
}
