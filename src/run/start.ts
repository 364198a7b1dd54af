/**
 * `npm start` / `iwr start`: the main job on the bundled tasks.
 *
 * 1. Validate and list the task set (a broken suite stops here, with every problem).
 * 2. With a model named (`--model` or IWR_MODEL): single-pass generation of every task
 *    on that OpenAI-compatible endpoint, then the fixed evaluator on its answers.
 *    The evaluator's judge and grounding are the official LLM ones when IWR_JUDGE_MODEL
 *    names a model, else the offline heuristic ones (labelled so in every result).
 * 3. Calibration: the evaluator scores each task's true page (`reference`) and an empty
 *    page (`blank`), both pairings: the ceiling and the floor that any model's numbers
 *    sit between, and a check that the evaluator itself is sound on this machine.
 *
 * Every run writes into a fresh folder `runs/start-<time>/`, so earlier results are
 * never rewritten.
 */
import fs from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";
import { validateAndList } from "../cli/task-views.ts";
import { loadTasks } from "../tasks/loader.ts";
import type { Task } from "../tasks/schema.ts";
import { calibrationProblems, calibrationTable, runCalibration } from "./calibration.ts";

const logger = log("start");

export interface StartOptions {
  data: string;
  /** Default: runs/start-<UTC time>. */
  runDir?: string;
  workers: number;
  /** A model preset, YAML file or model id; enables generation + evaluation. */
  model?: string;
  baseURL?: string;
  /** Model behind the evaluator's llm judge and grounding; offline heuristics when absent. */
  judgeModel?: string;
}

function defaultRunDir(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return path.join("runs", `start-${stamp}`);
}

async function generateAndEvaluate(options: StartOptions, runDir: string, tasks: readonly Task[], model: string): Promise<boolean> {
  const [{ loadModelSpec }, { runGeneration, summaryLine }, { runEvaluation }] = await Promise.all([
    import("../models/index.ts"),
    import("./generate.ts"),
    import("./evaluate.ts"),
  ]);
  const spec = loadModelSpec(model, options.baseURL ? { baseURL: options.baseURL } : {});
  const resultDir = path.join(runDir, "results");
  console.log(`\ngenerating ${tasks.length} task(s) with ${spec.name} (single pass) into ${resultDir}`);
  try {
    const generation = await runGeneration({ tasks: tasks.map((task) => task.inputs), resultDir, spec, cacheMode: "read-write" });
    console.log(summaryLine(generation, spec.name));
  } catch (error) {
    // Preflight failures (no key, endpoint unreachable) end here, before any work.
    console.error(`generation did not start: ${errorMessage(error)}`);
    return false;
  }
  const judge = options.judgeModel ? "llm" : "heuristic";
  console.log(`evaluating ${spec.name} with the ${judge === "llm" ? `LLM judge and grounding (${options.judgeModel})` : "offline heuristic judge and grounding"}`);
  const evaluation = await runEvaluation({
    dataPath: options.data,
    resultDir,
    model: spec.name,
    judge,
    grounding: judge,
    pairing: "official",
    workers: options.workers,
    ...(options.judgeModel ? { judgeModel: options.judgeModel } : {}),
    ...(options.baseURL ? { baseURL: options.baseURL } : {}),
  });
  const failed = evaluation.tasks.filter((task) => task.status === "failed").length;
  console.log(`evaluated ${evaluation.tasks.length - failed} task(s), ${failed} failed; report: ${evaluation.reportPath ?? "(none)"}`);
  return true;
}

async function calibrate(runDir: string, tasks: readonly Task[], workers: number): Promise<boolean> {
  const resultDir = path.join(runDir, "calibration");
  console.log(`\ncalibration: scoring each task's reference page and a blank page (offline judge, both pairings) into ${resultDir}`);
  const started = Date.now();
  let done = 0;
  const rows = await runCalibration({
    tasks,
    resultDir,
    workers,
    onRow: (row) => {
      done += 1;
      const final = row.evaluation.records.find((entry) => entry.mode === "aligned")?.record.scores.final ?? 0;
      console.log(`  [${done}/${tasks.length * 2}] task ${row.task.id} ${row.candidate}: Final ${(final * 100).toFixed(2)} % (aligned)`);
    },
  });
  const table = calibrationTable(tasks, rows);
  const problems = calibrationProblems(tasks, rows);
  const visualMetric = rows[0]?.evaluation.records[0]?.record.settings.visualMetric ?? "unknown";
  const summary = [
    "# Calibration of the evaluator on the bundled suite",
    "",
    `Offline judge and grounding; visual metric: ${visualMetric}. Percentages.`,
    "",
    table,
    "",
    problems.length === 0 ? "All calibration targets met." : `Targets missed:\n\n${problems.map((line) => `    ${line}`).join("\n")}`,
    "",
  ].join("\n");
  fs.writeFileSync(path.join(runDir, "calibration.md"), summary);
  console.log(`\n${table}\n\nwall time ${((Date.now() - started) / 1000).toFixed(1)} s; visual metric ${visualMetric}; written to ${path.join(runDir, "calibration.md")}`);
  if (problems.length > 0) console.log(`\ncalibration targets missed:\n${problems.join("\n")}`);
  else console.log("calibration targets met: reference IFS 100 % on every task and mean Final ≥ 90 %; blank IFS 0 and mean Final ≤ 15 % (aligned)");
  return problems.length === 0;
}

/** Runs the main job; returns the process exit code. */
export async function runStart(options: StartOptions): Promise<number> {
  const listed = await validateAndList(options.data);
  if (listed !== 0) return listed;
  const tasks = await loadTasks(options.data);
  const runDir = options.runDir ?? defaultRunDir();
  if (fs.existsSync(runDir) && fs.readdirSync(runDir).length > 0) {
    console.error(`iwr start: ${runDir} already holds results; choose another --run-dir (finished results are never rewritten)`);
    return 1;
  }
  fs.mkdirSync(runDir, { recursive: true });
  logger.debug(`run folder ${runDir}`);

  let ok = true;
  if (options.model) ok = (await generateAndEvaluate(options, runDir, tasks, options.model)) && ok;
  else console.log("\nno model named (set IWR_MODEL or pass --model, plus OPENAI_API_KEY / OPENAI_BASE_URL): skipping generation");
  ok = (await calibrate(runDir, tasks, options.workers)) && ok;
  return ok ? 0 : 1;
}
