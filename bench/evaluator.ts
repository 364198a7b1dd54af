/**
 * `npm run bench:evaluator [-- --data tasks/iwr-mini.jsonl]`: how long and how much CPU
 * our evaluator takes on the bundled suite's reference pages (offline judge + grounding),
 * against a floor measured in the same run on the same pages:
 *
 *   floor = the protocol's mandated waits (1 s after opening + 0.5 s after each action)
 *         + what bare Playwright needs to open each page, do the same clicks / typing /
 *           keys / scrolls (at the elements our replay chose) and take the same
 *           viewport screenshots — no grounding, judging, scoring, tracing or files.
 *
 * Prints, for 1 worker and for 2: the wall time against the floor's (target ≤ 1.3× at
 * 1 worker), the throughput of 2 workers over 1 (target ≥ 1.6×), and the CPU per task of
 * this process and everything below it (Chromium, the OCR workers) against the floor's
 * CPU per task. Twice: "cold", with an empty store of image readings (a suite's first
 * evaluation: every checkpoint and screenshot read by OCR), and "warm", with the store
 * the cold run left and this process's memory of readings forgotten (every later
 * evaluation; a reference page renders the same pixels, so little is read again). Each
 * run prints its readings' hit rate. Process start-up (Chromium launch, OCR workers) is
 * paid once and reported separately, not in any figure. `-- --no-trace` measures without
 * trace.zip.
 *
 * Beside each figure, how busy the machine's CPUs were, and the ceiling that implies:
 * if 2 workers need the CPU-seconds that 1 worker needed (printed as "CPU 2 / 1"), they
 * cannot finish sooner than those spread over all CPUs. The machine's figure counts
 * other people's processes too; the tree's does not.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pLimit from "p-limit";
import type { Browser } from "playwright";
import { existingTaskFile, parseScriptArgs } from "../scripts/cli-args.ts";
import type { ReplayRecord } from "../src/evaluator/evaluate-task.ts";
import { PROTOCOL } from "../src/protocol.ts";
import type { Task } from "../src/tasks/schema.ts";
import { type CpuReading, startCpuMeter } from "./machine-cpu.ts";
import { ProcessTreeCpu } from "./process-tree-cpu.ts";
import { readingsLine } from "./readings.ts";

const { values } = parseScriptArgs({
  name: "bench:evaluator",
  command: "npm run bench:evaluator --",
  summary:
    "Times the evaluator on the suite's reference pages (offline judge + grounding) against bare Playwright doing the same steps with " +
    "the protocol's waits (target <= 1.3x), 2 workers against 1 (target >= 1.6x), and the CPU per task against the floor's, " +
    "with the image readings cold and warm. ~10 min.",
  options: {
    data: { type: "string", value: "<tasks.jsonl>", description: "the task file", default: "tasks/iwr-mini.jsonl", parse: existingTaskFile },
    "no-trace": { type: "boolean", description: "measure without writing trace.zip" },
  },
});

// Loaded once the arguments are good, so that --help and a usage error answer at once
// rather than after the browser's, OCR's and the evaluator's modules.
const [
  { configureLogger },
  { sharedBrowser },
  { startStaticServer },
  { normalizeKey },
  { loadTasks },
  { default: sharp },
  { ocrPoolSizeFor, readImageText },
  { forgetReadings, readingCounts, setReadingStoreDir },
  { forgetOcrCosts, ocrCostTable },
  { evaluateTask },
  { candidateMounts },
  { closeEvaluator, createEvaluator },
  { writeCalibrationCandidate },
  { runPipelined, trajectoryLength },
] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/browser/launch.ts"),
  import("../src/browser/static-server.ts"),
  import("../src/browser/actions.ts"),
  import("../src/tasks/loader.ts"),
  import("sharp"),
  import("../src/metrics/ocr.ts"),
  import("../src/metrics/image-readings.ts"),
  import("../src/metrics/ocr-cost.ts"),
  import("../src/evaluator/evaluate-task.ts"),
  import("../src/replay/candidate-serving.ts"),
  import("../src/evaluator/create-evaluator.ts"),
  import("../src/calibration/calibration.ts"),
  import("../src/evaluator/task-pipeline.ts"),
]);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Timed<T> {
  ms: number;
  value: T;
}

async function timed<T>(work: () => Promise<T>): Promise<Timed<T>> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

interface OursRun {
  startupMs: number;
  runMs: number;
  cpu: CpuReading;
  /** CPU seconds of this process and every process below it during the run. */
  treeCpuSec: number;
  replays: Map<number, ReplayRecord>;
  readings: string;
  /** OCR readings and their CPU by purpose (ocr-cost.ts), as a table. */
  ocrCosts: string;
}

/**
 * Evaluates every task's reference page with `workers` at once, its image readings kept in
 * `storeDir` and none remembered from an earlier run in this process; start-up timed apart.
 */
async function ours(tasks: readonly Task[], resultDir: string, workers: number, trace: boolean, storeDir: string): Promise<OursRun> {
  setReadingStoreDir(storeDir);
  const startup = await timed(async () => {
    const evaluator = await createEvaluator({ judge: "heuristic", grounding: "heuristic", trace, workers });
    await sharedBrowser();
    // The OCR pools (whole screens and crops, one worker per slot each) start on first use;
    // each worker's first reading is slow (model set-up), so warm them all here, on shrunk
    // copies whose texts the run will not reuse.
    const warmUp = tasks.slice(0, ocrPoolSizeFor(workers)).flatMap((task) => {
      const shrunk = sharp(fs.readFileSync(task.truth.checkpointPaths[0]!)).resize({ width: 640 }).png().toBuffer();
      return [shrunk.then((png) => readImageText(png)), shrunk.then((png) => readImageText(png, { layout: "block" }))];
    });
    await Promise.all(warmUp);
    // The warm-up's own readings are not the run's.
    forgetReadings();
    forgetOcrCosts();
    return evaluator;
  });
  const evaluator = startup.value;
  const replays = new Map<number, ReplayRecord>();
  const cpuSinceStart = startCpuMeter();
  const tree = new ProcessTreeCpu();
  try {
    // The same scheduling as `iwr evaluate --workers N`: N pages open, judging and scoring overlapping the next replay.
    const run = await timed(() =>
      runPipelined(tasks, { workers, weight: trajectoryLength }, async (task) => {
        const candidateDir = path.join(resultDir, String(task.id), "reference");
        const evaluation = await evaluateTask({
          task,
          candidateDir,
          model: "reference",
          pairingModes: ["aligned"],
          evaluator,
          replace: true,
          calibration: true,
        });
        replays.set(task.id, evaluation.replay);
      }),
    );
    const cpu = cpuSinceStart();
    const treeCpuSec = tree.stop();
    const readings = readingsLine(readingCounts());
    const ocrCosts = ocrCostTable();
    await closeEvaluator();
    forgetReadings();
    return { startupMs: startup.ms, runMs: run.ms, cpu, treeCpuSec, replays, readings, ocrCosts };
  } catch (error) {
    await closeEvaluator();
    throw error;
  }
}

/** Bare Playwright doing what the replay did on one page, with the protocol's waits. */
async function floorTask(browser: Browser, task: Task, resultDir: string, replay: ReplayRecord): Promise<void> {
  const candidateDir = path.join(resultDir, String(task.id), "reference");
  const server = await startStaticServer({ mounts: candidateMounts(candidateDir, task.inputs.assetsDir) });
  const context = await browser.newContext({ viewport: task.inputs.resolution, deviceScaleFactor: 1 });
  try {
    const page = await context.newPage();
    await page.goto(server.url("index.html"), { waitUntil: "load" });
    await sleep(PROTOCOL.initialSettleMs);
    await page.screenshot();
    for (const step of replay.steps.filter((s) => s.ok)) {
      const action = task.truth.actions[step.index];
      const box = step.target?.box;
      const centre = box ? { x: box.x + box.width / 2, y: box.y + box.height / 2 } : undefined;
      if (step.type === "Click" && centre) await page.mouse.click(centre.x, centre.y);
      if (step.type === "Type" && centre) {
        await page.mouse.click(centre.x, centre.y);
        await page.keyboard.type(step.typedText ?? action?.parameters.text ?? "");
      }
      if (step.type === "Press") await page.keyboard.press(normalizeKey(step.key ?? action?.parameters.key ?? "Enter"));
      if (step.type === "Scroll") await page.evaluate((fraction) => window.scrollBy(0, window.innerHeight * fraction), PROTOCOL.scrollViewportFraction);
      await sleep(PROTOCOL.actionSettleMs);
      await page.screenshot();
    }
  } finally {
    await context.close();
    await server.close();
  }
}

async function main(): Promise<number> {
  const trace = !values["no-trace"];
  configureLogger({ level: "warn" });
  const tasks = await loadTasks(values.data);
  const resultDir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-evaluator-"));
  try {
    for (const task of tasks) writeCalibrationCandidate(task, resultDir, "reference");
    const actions = tasks.reduce((sum, task) => sum + task.truth.actions.length, 0);
    console.log(
      `${tasks.length} task(s), ${actions} action(s), reference pages, offline judge + grounding, trace ${trace ? "on" : "off"}; ` +
        `${os.cpus().length} CPU(s), load ${os.loadavg()[0]?.toFixed(1)}`,
    );

    // Image readings are kept on disk between runs (image-readings.ts): "cold" runs start
    // from an empty store, "warm" ones from the store the 1-worker cold run left. Each
    // figure compares runs with the same store state.
    const storeDir = (name: string) => path.join(resultDir, ".image-readings", name);
    const one = await ours(tasks, resultDir, 1, trace, storeDir("first"));
    const executed = [...one.replays.values()].reduce((sum, replay) => sum + replay.executed, 0);
    const browser = await sharedBrowser();
    const floorTree = new ProcessTreeCpu();
    const floor = await timed(async () => {
      for (const task of tasks) await floorTask(browser, task, resultDir, one.replays.get(task.id)!);
    });
    const floorCpuPerTask = floorTree.stop() / tasks.length;
    // Not a target: how far bare Playwright itself scales to 2 pages on this machine, for reading the 2-worker figure.
    const floorTwo = await timed(async () => {
      const limit = pLimit(2);
      await Promise.all(tasks.map((task) => limit(() => floorTask(browser, task, resultDir, one.replays.get(task.id)!))));
    });
    const waitsMs = tasks.length * PROTOCOL.initialSettleMs + executed * PROTOCOL.actionSettleMs;
    await closeEvaluator();
    const two = await ours(tasks, resultDir, 2, trace, storeDir("second"));
    const oneWarm = await ours(tasks, resultDir, 1, trace, storeDir("first"));
    const twoWarm = await ours(tasks, resultDir, 2, trace, storeDir("first"));

    const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(`protocol waits:         ${seconds(waitsMs)} (${executed} executed actions)`);
    console.log(`floor (waits + bare):   ${seconds(floor.ms)}; CPU ${floorCpuPerTask.toFixed(2)} s per task (this process and below)`);
    console.log(
      `bare Playwright, 2 pages at once: ${seconds(floorTwo.ms)} = ${(floor.ms / floorTwo.ms).toFixed(2)}x one (not a target: what this machine allows)`,
    );
    const busy = (run: OursRun) => `CPUs ${((100 * run.cpu.busySeconds) / run.cpu.capacitySeconds).toFixed(0)}% busy, ${run.cpu.busySeconds.toFixed(1)} cpu-s`;
    const perTask = (run: OursRun) => {
      const cpu = run.treeCpuSec / tasks.length;
      return `CPU ${cpu.toFixed(2)} s per task = ${(cpu / floorCpuPerTask).toFixed(2)}x the floor's`;
    };
    const pairs = [
      ["cold", "empty store: every image read by OCR (a suite's first evaluation)", one, two],
      ["warm", "the store the cold run left, nothing in memory (every later evaluation)", oneWarm, twoWarm],
    ] as const;
    for (const [label, meaning, first, second] of pairs) {
      // If 2 workers need the CPU-seconds 1 worker needed (the "CPU 2 / 1" figure checks it),
      // they cannot finish sooner than those spread over every CPU: that caps their throughput.
      const ceiling = (first.cpu.cpus * first.runMs) / 1000 / first.cpu.busySeconds;
      console.log(`-- ${label}: ${meaning}`);
      console.log(`ours, 1 worker:         ${seconds(first.runMs)}  (${busy(first)}; start-up ${seconds(first.startupMs)}, not counted)`);
      console.log(`                        ${perTask(first)}; ${first.readings}`);
      console.log(`ours, 2 workers:        ${seconds(second.runMs)}  (${busy(second)}; start-up ${seconds(second.startupMs)}, not counted)`);
      console.log(`                        ${perTask(second)}; ${second.readings}`);
      console.log(`ratio ours(1) / floor:  ${(first.runMs / floor.ms).toFixed(2)}x  (target <= 1.3x)`);
      console.log(`throughput 2 vs 1:      ${(first.runMs / second.runMs).toFixed(2)}x  (target >= 1.6x)`);
      console.log(
        `CPU ceiling of 2 vs 1:  ${ceiling.toFixed(2)}x on these ${first.cpu.cpus} CPUs ` +
          `(CPU 2 / 1 = ${(second.cpu.busySeconds / first.cpu.busySeconds).toFixed(2)})`,
      );
      console.log(`what OCR read at 1 worker, and for what:\n${first.ocrCosts}`);
    }
    console.log(`load average at the end: ${os.loadavg()[0]?.toFixed(1)} (other processes on these ${os.cpus().length} CPUs skew every figure)`);
    return 0;
  } finally {
    fs.rmSync(resultDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
