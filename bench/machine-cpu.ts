/**
 * How busy the machine's CPUs were over a stretch of time, from the operating system's
 * per-CPU counters (os.cpus(), so it works on Linux, macOS and Windows). It counts every
 * process — our Node threads, Chromium's processes, and anything else running — which is
 * what decides whether more workers can still go faster. The counters cover every CPU the
 * OS reports: in a container held to fewer CPUs by a quota, the figures overstate them.
 */
import os from "node:os";

export interface CpuReading {
  /** CPU-seconds spent running anything (user, nice, system, irq), summed over the CPUs. */
  busySeconds: number;
  /** Busy plus idle CPU-seconds in the stretch (about wall time × CPUs; time the OS counts as neither is left out). */
  capacitySeconds: number;
  cpus: number;
}

type Counters = { busyMs: number; totalMs: number; cpus: number };

function counters(): Counters {
  const cpus = os.cpus();
  let busyMs = 0;
  let totalMs = 0;
  for (const { times } of cpus) {
    const busy = times.user + times.nice + times.sys + times.irq;
    busyMs += busy;
    totalMs += busy + times.idle;
  }
  return { busyMs, totalMs, cpus: cpus.length };
}

/** Starts a stretch; the returned function reads how busy the CPUs were since. */
export function startCpuMeter(): () => CpuReading {
  const start = counters();
  return () => {
    const end = counters();
    return { busySeconds: (end.busyMs - start.busyMs) / 1000, capacitySeconds: (end.totalMs - start.totalMs) / 1000, cpus: end.cpus };
  };
}
