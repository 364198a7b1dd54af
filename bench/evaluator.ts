/**
 * `npm run bench:evaluator [-- --data tasks/iwr-mini.jsonl]`: how long our evaluator
 * takes on the bundled suite's reference pages (offline judge + grounding), against a
 * floor measured in the same run on the same pages:
 *
 *   floor = the protocol's mandated waits (1 s after opening + 0.5 s after each action)
 *         + what bare Playwright needs to open each page, do the same clicks / typing /
 *           keys / scrolls (at the elements our replay chose) and take the same
 *           viewport screenshots — no grounding, judging, scoring, tracing or files.
 *
 * Prints ours(1 worker) / floor (target ≤ 1.3×) and the throughput of 2 workers over
 * 1 (target ≥ 1.6×), each twice: with the checkpoints' OCR texts still to read (a
 * suite's first evaluation) and found in the on-disk text store (every later one). On
 * reference pages most checkpoints are byte for byte the replay's own screenshots, whose
 * texts are read anyway, so cold and warm cost about the same here; a model's page differs.
 * Process start-up (Chromium launch, OCR worker) is paid once and reported separately,
 * not in any figure. `-- --no-trace` measures without trace.zip.
 *
 * Beside each figure, how busy the machine's CPUs were, and the ceiling that implies:
 * if 2 workers need the CPU-seconds that 1 worker needed (printed as "CPU 2 / 1"), they
 * cannot finish sooner than those spread over all CPUs. A third pair keeps the evaluator
 * and its in-memory texts from the run before (the replay renders the same pixels, so
 * its screenshots' texts are already read): not a real evaluation, it shows how the
 * rest of the evaluator scales once OCR takes no CPU.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pLimit from "p-limit";
import type { Browser } from "playwright";
import { existingTaskFile, parseScriptArgs } from "../scripts/cli-args.ts";
import type { ReplayRecord } from "../src/evaluator/evaluate-task.ts";
import { PROTOCOL } from "../src/protocol.ts";
import { candidateFiles } from "../src/results/layout.ts";
import type { Task } from "../src/tasks/schema.ts";
import { type CpuReading, startCpuMeter } from "./machine-cpu.ts";

const { values } = parseScriptArgs({
  name: "bench:evaluator",
  command: "npm run bench:evaluator --",
  summary:
    "Times the evaluator on the suite's reference pages (offline judge + grounding) against bare Playwright doing the same steps with " +
    "the protocol's waits (target <= 1.3x), and 2 workers against 1 (target >= 1.6x), with the checkpoint texts cold and warm. ~10 min.",
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
  { ocrPoolSizeFor, readImageText, setReferenceTextDir },
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
  replays: Map<number, ReplayRecord>;
  /** sha256 of every evalpoint the run took. */
  screenshotHashes: Set<string>;
}

function evalpointHashes(tasks: readonly Task[], resultDir: string): Set<string> {
  const hashes = new Set<string>();
  for (const task of tasks) {
    const dir = candidateFiles(path.join(resultDir, String(task.id), "reference")).evalpoints;
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir))
      hashes.add(
        createHash("sha256")
          .update(fs.readFileSync(path.join(dir, name)))
          .digest("hex"),
      );
  }
  return hashes;
}

/**
 * Evaluates every task's reference page with `workers` at once; start-up timed apart.
 * `keepEvaluator` leaves it (browser, OCR workers and their in-memory texts) running for the next call.
 */
async function ours(tasks: readonly Task[], resultDir: string, workers: number, trace: boolean, keepEvaluator = false): Promise<OursRun> {
  const startup = await timed(async () => {
    const evaluator = await createEvaluator({ judge: "heuristic", grounding: "heuristic", trace, workers });
    await sharedBrowser();
    // The OCR pool is started by createEvaluator; each worker's first reading is slow (model
    // set-up), so warm them all here, on shrunk copies whose texts the run will not reuse.
    const warmUp = tasks.slice(0, ocrPoolSizeFor(workers)).map(async (task) => {
      const shrunk = await sharp(fs.readFileSync(task.truth.checkpointPaths[0]!)).resize({ width: 640 }).png().toBuffer();
      return readImageText(shrunk);
    });
    await Promise.all(warmUp);
    return evaluator;
  });
  const evaluator = startup.value;
  const replays = new Map<number, ReplayRecord>();
  const cpuSinceStart = startCpuMeter();
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
    if (!keepEvaluator) await closeEvaluator();
    return { startupMs: startup.ms, runMs: run.ms, cpu, replays, screenshotHashes: evalpointHashes(tasks, resultDir) };
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

    // The checkpoints' OCR texts are kept on disk between runs (reference-text-store.ts), so a
    // suite's first evaluation ("cold") reads them and every later one ("warm") does not.
    // Both are measured; each figure compares runs with the same cache state.
    const textDir = (name: string) => path.join(resultDir, ".ocr-text", name);
    setReferenceTextDir(textDir("first"));
    const one = await ours(tasks, resultDir, 1, trace);
    const executed = [...one.replays.values()].reduce((sum, replay) => sum + replay.executed, 0);
    const browser = await sharedBrowser();
    const floor = await timed(async () => {
      for (const task of tasks) await floorTask(browser, task, resultDir, one.replays.get(task.id)!);
    });
    // Not a target: how far bare Playwright itself scales to 2 pages on this machine, for reading the 2-worker figure.
    const floorTwo = await timed(async () => {
      const limit = pLimit(2);
      await Promise.all(tasks.map((task) => limit(() => floorTask(browser, task, resultDir, one.replays.get(task.id)!))));
    });
    const waitsMs = tasks.length * PROTOCOL.initialSettleMs + executed * PROTOCOL.actionSettleMs;
    await closeEvaluator();
    setReferenceTextDir(textDir("second"));
    const two = await ours(tasks, resultDir, 2, trace);
    setReferenceTextDir(textDir("first"));
    const oneWarm = await ours(tasks, resultDir, 1, trace);
    const twoWarm = await ours(tasks, resultDir, 2, trace, true);
    // The page renders the same pixels every run, so the last run's texts serve these two
    // (checked below: a screenshot the run before did not take was read by OCR).
    const oneKnown = await ours(tasks, resultDir, 1, trace, true);
    const twoKnown = await ours(tasks, resultDir, 2, trace);

    const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(`protocol waits:         ${seconds(waitsMs)} (${executed} executed actions)`);
    console.log(`floor (waits + bare):   ${seconds(floor.ms)}`);
    console.log(
      `bare Playwright, 2 pages at once: ${seconds(floorTwo.ms)} = ${(floor.ms / floorTwo.ms).toFixed(2)}x one (not a target: what this machine allows)`,
    );
    const busy = (run: OursRun) => `CPUs ${((100 * run.cpu.busySeconds) / run.cpu.capacitySeconds).toFixed(0)}% busy, ${run.cpu.busySeconds.toFixed(1)} cpu-s`;
    const pairs = [
      ["cold", "checkpoint texts read by OCR in the run (a suite's first evaluation)", one, two],
      ["warm", "checkpoint texts found on disk (every later evaluation)", oneWarm, twoWarm],
      ["texts known", "screenshot texts kept in memory from the last run: OCR excluded, not a real evaluation", oneKnown, twoKnown],
    ] as const;
    for (const [label, meaning, first, second] of pairs) {
      // If 2 workers need the CPU-seconds 1 worker needed (the "CPU 2 / 1" figure checks it),
      // they cannot finish sooner than those spread over every CPU: that caps their throughput.
      const ceiling = (first.cpu.cpus * first.runMs) / 1000 / first.cpu.busySeconds;
      const real = label !== "texts known";
      console.log(`-- ${label}: ${meaning}`);
      console.log(`ours, 1 worker:         ${seconds(first.runMs)}  (${busy(first)}; start-up ${seconds(first.startupMs)}, not counted)`);
      console.log(`ours, 2 workers:        ${seconds(second.runMs)}  (${busy(second)}; start-up ${seconds(second.startupMs)}, not counted)`);
      if (real) console.log(`ratio ours(1) / floor:  ${(first.runMs / floor.ms).toFixed(2)}x  (target <= 1.3x)`);
      console.log(`throughput 2 vs 1:      ${(first.runMs / second.runMs).toFixed(2)}x${real ? "  (target >= 1.6x)" : ""}`);
      console.log(
        `CPU ceiling of 2 vs 1:  ${ceiling.toFixed(2)}x on these ${first.cpu.cpus} CPUs ` +
          `(CPU 2 / 1 = ${(second.cpu.busySeconds / first.cpu.busySeconds).toFixed(2)})`,
      );
      if (!real) {
        const unseen = (run: OursRun, before: OursRun) => [...run.screenshotHashes].filter((hash) => !before.screenshotHashes.has(hash)).length;
        console.log(
          `screenshots new to the run before (read by OCR after all): 1 worker ${unseen(first, twoWarm)} of ${first.screenshotHashes.size}, ` +
            `2 workers ${unseen(second, first)} of ${second.screenshotHashes.size}`,
        );
      }
    }
    console.log(`load average at the end: ${os.loadavg()[0]?.toFixed(1)} (other processes on these ${os.cpus().length} CPUs skew every figure)`);
    return 0;
  } finally {
    fs.rmSync(resultDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
