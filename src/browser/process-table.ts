/**
 * Linux's process table, read from /proc: which processes there are and each one's stat
 * fields. The host finds a new page's renderer in it (renderer-spawn.ts); the benchmarks
 * count a process tree's CPU from it (bench/process-tree-cpu.ts).
 */
import fs from "node:fs";

/** Whether a /proc read failed because the process is gone (it ended between listing and reading). */
export function processGone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ESRCH";
}

/** Every process's id. */
export function processIds(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/**
 * A /proc stat file's fields from the third on (state, ppid, …, counted here from 0): the
 * command name before them may hold spaces and parentheses, so they start after the last ")".
 */
export function statFields(text: string): string[] {
  return text.slice(text.lastIndexOf(")") + 2).split(" ");
}

/** Process `pid`'s stat fields (statFields), or undefined once it has ended; any other failure throws. */
export function processStat(pid: number): string[] | undefined {
  try {
    return statFields(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch (error) {
    if (processGone(error)) return undefined;
    throw error;
  }
}
