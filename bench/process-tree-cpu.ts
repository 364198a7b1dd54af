/**
 * The CPU time of this process and of every process below it, Chromium's renderers
 * included, from Linux's /proc.
 *
 * Why not the kernel's children counters (cutime/cstime, what `time` prints): they hold
 * a child's time only once its parent has waited for it. Chromium's renderers are
 * children of its zygote, and closing the browser never passes their time up to us. A
 * renderer that spins for 5 s added 0.7 s to those counters, and the machine counted
 * 6.5 s. So the tree is walked every `pollMs` and each process's own time is kept as last
 * seen. Threads are counted with their process. What a process uses in its last poll
 * interval before it exits is missed, so the figure errs low.
 */
import fs from "node:fs";
import { CLOCK_TICKS_PER_SEC, processIds, processStat, statFields } from "../src/files/process-table.ts";

interface ProcessReading {
  parent: number;
  /** utime + stime of the process's own threads, in clock ticks. */
  ticks: number;
  /** Start time in ticks since boot: tells a process from a later one that got its pid. */
  started: string;
}

/** utime + stime of a /proc stat file (a process's or a thread's own), in seconds. */
export function statCpuSec(file: string): number {
  const fields = statFields(fs.readFileSync(file, "utf8"));
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
}

function readProcess(pid: number): ProcessReading | undefined {
  const fields = processStat(pid);
  if (!fields) return undefined; // exited meanwhile
  // stat fields 4 (ppid), 14 (utime), 15 (stime) and 22 (starttime), counted from 1; here from 3.
  return { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), started: fields[19] ?? "" };
}

export class ProcessTreeCpu {
  /** Per process (pid and start time): its ticks when first seen and when last seen. */
  private readonly seen = new Map<string, { first: number; last: number }>();
  private readonly timer: NodeJS.Timeout;
  private stopped?: number;

  /** Starts counting from now: processes of the tree already running count only their time from here on. */
  constructor(pollMs = 200) {
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), pollMs);
    this.timer.unref();
  }

  /** CPU seconds the tree has used since the start, as of the last poll (the sampling goes on). */
  soFar(): number {
    if (this.stopped !== undefined) return this.stopped;
    let ticks = 0;
    for (const { first, last } of this.seen.values()) ticks += last - first;
    return ticks / CLOCK_TICKS_PER_SEC;
  }

  /** CPU seconds the tree has used since the start; the first call stops the sampling. */
  stop(): number {
    if (this.stopped === undefined) {
      this.sample(false);
      clearInterval(this.timer);
      let ticks = 0;
      for (const { first, last } of this.seen.values()) ticks += last - first;
      this.stopped = ticks / CLOCK_TICKS_PER_SEC;
    }
    return this.stopped;
  }

  private sample(atStart: boolean): void {
    const readings = new Map<number, ProcessReading>();
    for (const pid of processIds()) {
      const reading = readProcess(pid);
      if (reading) readings.set(pid, reading);
    }
    const children = new Map<number, number[]>();
    for (const [pid, { parent }] of readings) children.set(parent, [...(children.get(parent) ?? []), pid]);
    const tree = [process.pid];
    for (let index = 0; index < tree.length; index++) tree.push(...(children.get(tree[index]!) ?? []));
    for (const pid of tree) {
      const reading = readings.get(pid);
      if (!reading) continue;
      const key = `${pid}:${reading.started}`;
      const known = this.seen.get(key);
      if (known) known.last = reading.ticks;
      // A process born after the start counts from zero.
      else this.seen.set(key, { first: atStart ? reading.ticks : 0, last: reading.ticks });
    }
  }
}

/**
 * CPU seconds used so far by this process (all its threads) and the processes below it
 * that are running now: for timing one piece of work at a time against long-lived
 * workers (OCR threads or processes), by the difference of two readings.
 */
export function treeCpuSecNow(): number {
  const readings = new Map<number, ProcessReading>();
  for (const pid of processIds()) {
    const reading = readProcess(pid);
    if (reading) readings.set(pid, reading);
  }
  let ticks = 0;
  const tree = [process.pid];
  for (let index = 0; index < tree.length; index++) {
    const pid = tree[index]!;
    ticks += readings.get(pid)?.ticks ?? 0;
    for (const [child, { parent }] of readings) if (parent === pid) tree.push(child);
  }
  return ticks / CLOCK_TICKS_PER_SEC;
}
