/**
 * `npm run bench:run [-- --ids 1,2 --latency-ms 3000]`: the demo experiment (its model
 * arms on a local server answering after a fixed latency) and how well the run overlaps
 * model waits with browser and CPU work. Two floors, both measured in the same run:
 *
 *   - the model calls' critical path at the configured concurrency: the larger of the
 *     longest chain of model waits inside one cell and the sum of every wait divided by
 *     the concurrency;
 *   - the CPU work divided by the cores: this process and every process below it
 *     (Chromium's renderers included, ffmpeg, the OCR threads), sampled from /proc
 *     (process-tree-cpu.ts says why the kernel's children counters are not enough); the
 *     whole machine's busy time is printed beside it as a cross-check.
 *
 * Printed: wall time / the larger floor (target ≤ 1.25); the CPU work per cell; how busy the
 * run kept the cores (its CPU work / (wall time × cores)) over the whole run and over its
 * last tenth, where a run that leaves one long cell alone at the end shows it; and the
 * image readings' hit rate (how many OCR readings, visual features and self-check pixels
 * were found already read). The run starts from empty caches of its own (responses, image
 * readings, video states), as on a fresh clone.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { nonNegativeInteger, parseScriptArgs } from "../scripts/cli-args.ts";
import { taskIdList } from "../src/cli/options.ts";

const { values } = parseScriptArgs({
  name: "bench:run",
  command: "npm run bench:run --",
  summary:
    "Runs the demo experiment with its model arms on a local server answering after a fixed latency, and prints the wall time " +
    "against the larger of the model calls' critical path and the CPU work / cores (target <= 1.25). --ids 1: ~3 min.",
  options: {
    ids: { type: "string", value: "<1,2>", description: "only these task ids (default: the demo config's)", parse: (text: string) => taskIdList(text) },
    "latency-ms": {
      type: "string",
      value: "<ms>",
      description: "how long the local server waits before each answer",
      default: "3000",
      parse: nonNegativeInteger,
    },
    out: { type: "string", value: "<dir>", description: "where the run folder and its cache go (default: a new temporary folder)" },
  },
});

// Loaded once the arguments are good, so that --help and a usage error answer at once.
const [
  { configureLogger },
  { runExperiment },
  { demoConfig, latencyServer, mainThreadCpuSec },
  { ProcessTreeCpu },
  { startCpuMeter },
  { readingCounts },
  { readingsLine },
  { ocrCostTable },
] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/experiment/run.ts"),
  import("./run-support.ts"),
  import("./process-tree-cpu.ts"),
  import("./machine-cpu.ts"),
  import("../src/metrics/image-readings.ts"),
  import("./readings.ts"),
  import("../src/metrics/ocr-cost.ts"),
]);

const TARGET = 1.25;

async function main(): Promise<void> {
  configureLogger({ level: "warn" });
  const { ids } = values;
  const latencyMs = values["latency-ms"];
  const out = values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-run-"));
  process.env.IWR_CACHE_DIR = path.join(out, "cache");
  process.env.IWR_READINGS_CACHE_DIR = path.join(out, "image-readings");
  process.env.IWR_STATES_CACHE_DIR = path.join(out, "video-states");
  const probe = demoConfig("http://127.0.0.1:1/v1", out, ids);
  const server = await latencyServer(probe.taskFile, ids?.[0] ?? 1, latencyMs);
  try {
    const config = demoConfig(server.baseURL, path.join(out, "run"), ids);
    const cores = os.availableParallelism();
    console.log(
      `bench:run — ${config.name}: ${config.arms.length} arms, concurrency ${config.concurrency}, model latency ${latencyMs} ms, ` +
        `${cores} cores; run in ${path.join(out, "run")}`,
    );
    const machine = startCpuMeter();
    const tree = new ProcessTreeCpu();
    const mainBefore = mainThreadCpuSec();
    const started = performance.now();
    // The tree's CPU so far, every second: how busy the run kept the cores at its end.
    const timeline: Array<{ sec: number; cpuSec: number }> = [{ sec: 0, cpuSec: 0 }];
    const sampler = setInterval(() => timeline.push({ sec: (performance.now() - started) / 1000, cpuSec: tree.soFar() }), 1000);
    const summary = await runExperiment(config).finally(() => clearInterval(sampler));
    const wallSec = (performance.now() - started) / 1000;
    const cpuSec = tree.stop();
    timeline.push({ sec: wallSec, cpuSec });
    const tailStart = timeline.find((point) => point.sec >= 0.9 * wallSec) ?? timeline[timeline.length - 1]!;
    const tailBusy = (cpuSec - tailStart.cpuSec) / (Math.max(1e-9, wallSec - tailStart.sec) * cores);
    const machineBusySec = machine().busySeconds;
    const mainSec = mainThreadCpuSec() - mainBefore;
    const waits = summary.cells.map((cell) => cell.produced.usage.latencyMs / 1000);
    const longestChain = Math.max(0, ...waits);
    const totalWait = waits.reduce((sum, wait) => sum + wait, 0);
    const criticalPath = Math.max(longestChain, totalWait / config.concurrency);
    const cpuFloor = cpuSec / cores;
    const floor = Math.max(criticalPath, cpuFloor);
    console.log(`cells ${summary.cells.length} (${summary.failed} failed); model requests ${server.chatRequests().length}`);
    console.log(
      `model waits: ${totalWait.toFixed(1)} s in all, longest cell ${longestChain.toFixed(1)} s → ` +
        `critical path at concurrency ${config.concurrency}: ${criticalPath.toFixed(1)} s`,
    );
    console.log(
      `CPU work: ${cpuSec.toFixed(1)} s over ${cores} cores → ${cpuFloor.toFixed(1)} s ` +
        `(of which this process's main thread ${mainSec.toFixed(1)} s: ${((100 * mainSec) / wallSec).toFixed(0)} % of the wall time)`,
    );
    console.log(
      `  cross-check: the whole machine was busy ${machineBusySec.toFixed(1)} CPU-seconds meanwhile ` +
        `(${((100 * machineBusySec) / (wallSec * cores)).toFixed(0)} % of its ${cores} cores)`,
    );
    console.log(
      `CPU work per cell: ${(cpuSec / Math.max(1, summary.cells.length)).toFixed(1)} s; the run kept the cores ` +
        `${((100 * cpuSec) / (wallSec * cores)).toFixed(0)} % busy (CPU work / (wall × cores)), ${(100 * tailBusy).toFixed(0)} % in its last tenth`,
    );
    console.log(`image readings: ${readingsLine(readingCounts())}`);
    console.log(`what OCR read, and for what:\n${ocrCostTable()}`);
    console.log(
      `wall time ${wallSec.toFixed(1)} s = ${(wallSec / floor).toFixed(2)} × the larger floor (${floor.toFixed(1)} s); ` +
        `target ≤ ${TARGET}: ${wallSec / floor <= TARGET ? "met" : "NOT met"}`,
    );
  } finally {
    await server.close();
  }
}

await main();
