/**
 * The one way this project writes a file that someone may read at any moment (a
 * result, a cache entry, a task file): into a temp file in the same folder, then a
 * rename, so a reader or a killed run never sees half of it. Same folder, because a
 * rename is only atomic within one file system.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { IwrError } from "../errors.ts";

/** This machine, as temp names carry it (a results folder may be shared between machines). */
const HOST_TAG =
  os
    .hostname()
    .replace(/[^A-Za-z0-9-]/g, "-")
    .slice(0, 40) || "host";

/**
 * A temp name beside `file` (a file or a folder), unique across processes, machines and
 * concurrent writers: `.<name>.<host>~<pid>.<ms>.<random>.tmp`. The writer's host and pid
 * are in the name so a later run can tell an abandoned temp from one still being written
 * (see sweepAbandonedTemps).
 */
export function tempPathBeside(file: string): string {
  const unique = `${HOST_TAG}~${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2, 10)}`;
  return path.join(path.dirname(file), `.${path.basename(file)}.${unique}.tmp`);
}

export interface TempName {
  /** The name of the file the temp stands in for. */
  target: string;
  host: string;
  pid: number;
  createdMs: number;
}

const TEMP_NAME = /^\.(.+)\.([A-Za-z0-9-]+)~(\d+)\.(\d+)\.([a-z0-9]+)\.tmp$/;

/** The parts of a name made by tempPathBeside, or undefined for any other name. */
export function parseTempName(name: string): TempName | undefined {
  const match = TEMP_NAME.exec(name);
  if (!match) return undefined;
  return { target: match[1] ?? "", host: match[2] ?? "", pid: Number(match[3]), createdMs: Number(match[4]) };
}

/** Whether a process of this pid runs on this machine. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A temp written on another machine is only taken for abandoned after this long. */
export const FOREIGN_TEMP_AGE_MS = 24 * 3600 * 1000;

/** Whether a temp of this name was abandoned: its writer on this machine is gone, or it is a day old from another machine. */
export function isAbandonedTemp(temp: TempName, nowMs = Date.now()): boolean {
  if (temp.host === HOST_TAG) return temp.pid !== process.pid && !isProcessAlive(temp.pid);
  return nowMs - temp.createdMs > FOREIGN_TEMP_AGE_MS;
}

/**
 * Removes the abandoned temps (files or folders) directly inside `dir`: what a killed
 * run left behind. Temps of live writers and every other entry are left alone. Returns
 * the names removed; a missing folder has none.
 */
export function sweepAbandonedTemps(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const temp = parseTempName(name);
    if (!temp || !isAbandonedTemp(temp)) continue;
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function writeFailure(file: string, error: unknown): IwrError {
  const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  return new IwrError("IO", `cannot write ${file}: ${reason}`, { file }, { cause: error });
}

export async function writeFileAtomic(file: string, data: string | Buffer): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const temp = tempPathBeside(file);
  try {
    await fs.promises.writeFile(temp, data);
    await fs.promises.rename(temp, file);
  } catch (error) {
    await fs.promises.rm(temp, { force: true });
    throw writeFailure(file, error);
  }
}

export function writeFileAtomicSync(file: string, data: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = tempPathBeside(file);
  try {
    fs.writeFileSync(temp, data);
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw writeFailure(file, error);
  }
}
