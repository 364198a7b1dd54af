/**
 * Linux's process table, read from /proc: which processes there are, each one's stat
 * fields and CPU time. The host finds a new page's renderer in it (src/browser/renderer-spawn.ts);
 * the OCR engine times each reading by it (src/metrics/ocr-native.ts); the benchmarks
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

/** Linux's clock ticks a second in /proc's CPU times (USER_HZ). */
export const CLOCK_TICKS_PER_SEC = 100;

/** Process `pid`'s CPU time so far in seconds (user and system, all its threads), or undefined once it has ended (or where there is no /proc). */
export function processCpuSec(pid: number): number | undefined {
  const fields = processStat(pid);
  // utime and stime are the stat file's 14th and 15th fields (12th and 13th from the state on).
  return fields ? (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC : undefined;
}
