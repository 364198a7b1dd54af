/**
 * The plan of an experiment: its tasks, the loaded arm resources and every (task, arm,
 * repeat) cell with its key and folder. In-process runs, shards and queue workers all
 * start from the same plan, so they agree on what a cell is and where it lives.
 *
 * A cell's key covers what would make its result differ: the arm's settings and the
 * content behind them (prompt and module files, the loaded model specs, a page taken from
 * elsewhere), the repeat, the task (its line, checkpoints, assets and video) and the
 * evaluator's settings. Paths are not part of it: a moved checkout keeps its cells.
 *
 * The run's key (run.json `runKey`, the "config hash" of queue jobs and shard merges)
 * covers the config's text and every cell key: two folders with the same run key were
 * made by the same config over the same tasks, models and prompts.
 */
import fs from "node:fs";
import path from "node:path";
import type { CellValues } from "../../agents/experiment/graph.ts";
import type { PageGenerator } from "../../agents/module-contract.ts";
import { type ErrorRecord, errorMessage, IwrError } from "../errors.ts";
import { taskKey } from "../evaluator/eval-keys.ts";
import { verifyEvalRecord } from "../evaluator/eval-record.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";
import { linksLeaving } from "../files/links-leaving.ts";
import { moveAside } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
// The model layer's light modules, not its index: planning and checking a finished run load no model client.
import { publicModelSpec } from "../models/endpoint.ts";
import { preflightModel } from "../models/preflight.ts";
import { loadModelSpec } from "../models/presets.ts";
import { canonicalJson } from "../models/request-key.ts";
import type { ModelSpec } from "../models/spec.ts";
import { NO_USAGE } from "../models/usage.ts";
import { profileRules } from "../protocol.ts";
import { CELL_RECORD_VERSION, type CellOutcome, type CellRecord, verifyCellRecord } from "../results/cell-record.ts";
import { candidateFiles, modelFolderName, RESULT_FILES, type RunFiles, runFiles } from "../results/layout.ts";
import { armKindLabel } from "../results/tracks.ts";
import { loadTasks } from "../tasks/loader.ts";
import type { Task } from "../tasks/schema.ts";
import { type Cell, cellFolderOf } from "./cell.ts";
import { type Arm, armFeedback, type ExperimentConfig } from "./config.ts";
import { loadModuleGenerator } from "./module-arm.ts";
import { reproducibilityRecord } from "./provenance.ts";

export type ArmSpecs = Map<string, { drafter: ModelSpec; critic?: ModelSpec }>;

export interface ExperimentPlan {
  config: ExperimentConfig;
  files: RunFiles;
  tasks: Task[];
  specs: ArmSpecs;
  modules: Map<string, PageGenerator>;
  cells: Map<string, Cell>;
  /** Every cell key, in the run's order (arm, repeat, task). */
  order: string[];
  /** sha256 of the config's text and every cell key. */
  runKey: string;
}

function selectTasks(config: ExperimentConfig, tasks: readonly Task[]): Task[] {
  const { ids, interaction, visual } = config.filters;
  if (ids) {
    const known = new Set(tasks.map((task) => task.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0)
      config.fail([
        {
          where: config.where(["tasks", "ids"]),
          message: `tasks.ids: task(s) ${unknown.join(", ")} are not in ${config.taskFile} (it has ${[...known].join(", ")})`,
        },
      ]);
  }
  const chosen = tasks.filter(
    (task) =>
      (!ids || ids.includes(task.id)) &&
      (!interaction || interaction.includes(task.meta.interactionComplexity)) &&
      (!visual || visual.includes(task.meta.visualComplexity)),
  );
  if (chosen.length === 0) config.fail([{ where: config.where(["tasks"]), message: `tasks: the filters leave no task of ${config.taskFile}` }]);
  return chosen;
}

async function fileSha256(file: string): Promise<string> {
  return sha256Hex(await fs.promises.readFile(file));
}

/** The hash of the page a results: arm takes for a task ("missing" when there is none: the cell reruns once it appears). */
async function resultsPageSha(arm: Arm, taskId: number): Promise<string> {
  if (arm.parsed.type !== "results") return "";
  const page = path.join(arm.parsed.dir, String(taskId), ...(arm.model ? [modelFolderName(arm.model, `arm ${arm.name}: model`)] : []), RESULT_FILES.page);
  return fs.existsSync(page) ? fileSha256(page) : "missing";
}

const repeatsOf = (arm: Arm, repeats: number) => (["single-pass", "agent", "module"].includes(arm.parsed.type) ? repeats : 1);

/** Model specs and module generators, loaded before any work: a bad model name or module fails here with the config's line. */
async function loadArmResources(config: ExperimentConfig) {
  const specs: ArmSpecs = new Map();
  const modules = new Map<string, PageGenerator>();
  const problems: Array<{ where: string; message: string }> = [];
  for (const [index, arm] of config.arms.entries()) {
    try {
      if (arm.model && arm.parsed.type !== "results") {
        const overrides = arm.baseURL ? { baseURL: arm.baseURL } : {};
        specs.set(arm.name, { drafter: loadModelSpec(arm.model, overrides), ...(arm.critic ? { critic: loadModelSpec(arm.critic, overrides) } : {}) });
      }
      if (arm.parsed.type === "module") modules.set(arm.name, await loadModuleGenerator(arm.parsed.file, `arms[${index}].kind`));
      if (arm.parsed.type === "results" && !fs.existsSync(arm.parsed.dir))
        throw new IwrError("CONFIG_INVALID", `arms[${index}].kind: results folder ${arm.parsed.dir} does not exist`);
      if (arm.parsed.type === "results") {
        // Its files are copied into the run: a link out of the folder would bring whatever it points at.
        const leaving = linksLeaving(arm.parsed.dir);
        if (leaving.length > 0)
          throw new IwrError(
            "CONFIG_INVALID",
            `arms[${index}].kind: results folder ${arm.parsed.dir} holds symbolic links that lead out of it (${leaving.join(", ")}); ` +
              "copy the files themselves into it",
          );
      }
    } catch (error) {
      problems.push({
        where: config.where(["arms", index, arm.parsed.type === "module" || arm.parsed.type === "results" ? "kind" : "model"]),
        message: errorMessage(error),
      });
    }
  }
  if (problems.length > 0) config.fail(problems);
  return { specs, modules };
}

/** Plans the experiment; a config or environment problem throws here, before any work. */
export async function planExperiment(config: ExperimentConfig): Promise<ExperimentPlan> {
  const files = runFiles(config.out);
  const tasks = selectTasks(config, await loadTasks(config.taskFile, { resolutionFallback: profileRules(config.evaluator.protocol).missingResolution }));
  const { specs, modules } = await loadArmResources(config);
  const evaluatorKey = canonicalJson({ ...config.evaluator, selfCheck: config.selfCheck });
  const cells = new Map<string, Cell>();
  const order: string[] = [];
  const taskKeys = new Map<number, string>(
    await Promise.all(tasks.map(async (task) => [task.id, sha256Hex(`${await taskKey(task)}:${await fileSha256(task.inputs.videoPath)}`)] as const)),
  );
  for (const arm of config.arms) {
    const entry = specs.get(arm.name);
    const armKey = canonicalJson({
      name: arm.name,
      kind: arm.kind,
      temperature: arm.temperature,
      agent: arm.agent,
      specs: entry ? { drafter: publicModelSpec(entry.drafter), ...(entry.critic ? { critic: publicModelSpec(entry.critic) } : {}) } : arm.model,
      prompt: arm.prompt ? await fileSha256(arm.prompt) : undefined,
      module: arm.parsed.type === "module" ? await fileSha256(arm.parsed.file) : undefined,
    });
    for (let repeat = 0; repeat < repeatsOf(arm, config.repeats); repeat++) {
      for (const task of tasks) {
        const source = arm.parsed.type === "results" ? await resultsPageSha(arm, task.id) : undefined;
        const key = sha256Hex(canonicalJson({ arm: armKey, repeat, task: taskKeys.get(task.id), evaluator: evaluatorKey, source })).slice(0, 24);
        cells.set(key, {
          arm,
          repeat,
          task,
          resultDir: files.armResults(arm.name, repeat),
          dir: files.cellDir(arm.name, repeat, task.id, cellFolderOf(arm, entry?.drafter.name)),
        });
        order.push(key);
      }
    }
  }
  const runKey = sha256Hex(canonicalJson({ config: sha256Hex(config.text), cells: order }));
  return { config, files, tasks, specs, modules, cells, order, runKey };
}

/**
 * The cell's record when it is finished for this plan (a failed one counts as finished unless `retryErrors`).
 * Verified, never trusted: a damaged cell.json, or a finished cell whose eval.json (where its
 * scores are) is damaged or gone, is moved aside with a warning and the cell runs again. Its
 * parts resume on their own terms: the page is kept, only the scoring is redone.
 */
export function finishedRecord(plan: ExperimentPlan, key: string, retryErrors = false): CellRecord | undefined {
  const cell = plan.cells.get(key)!;
  const file = plan.files.cellRecord(cell.dir);
  const read = verifyCellRecord(file);
  if (read.status === "corrupt") moveAside(file, read.reason, "the cell runs again");
  if (read.status !== "ok") return undefined;
  const record = read.value;
  if (record.cellKey !== key || (record.status !== "finished" && retryErrors)) return undefined;
  if (record.produced.status === "made" && record.evaluation.status !== "failed") {
    const evalFile = candidateFiles(cell.dir).eval;
    const scores = verifyEvalRecord(evalFile);
    if (scores.status === "corrupt") moveAside(evalFile, scores.reason, "the cell is scored again");
    else if (scores.status === "missing") log("experiment").warn(`${evalFile} is missing although ${file} says the cell was scored; the cell is scored again`);
    if (scores.status !== "ok") return undefined;
  }
  return record;
}

/** Which share of a run a folder holds: all of it, or one shard of n. */
export interface RunShare {
  /** The keys of the cells this folder runs (a report counts these only). */
  cells: string[];
  shard?: { index: number; count: number };
}

/** Whether run.json already records this plan and share (same run key, cells and shard) beside the same config.yaml. */
function recordsThisRun(plan: ExperimentPlan, share: RunShare): boolean {
  try {
    const record = JSON.parse(fs.readFileSync(plan.files.record, "utf8")) as { runKey?: unknown; cells?: unknown; shard?: unknown };
    return (
      record.runKey === plan.runKey &&
      canonicalJson(record.cells) === canonicalJson(share.cells) &&
      canonicalJson(record.shard ?? null) === canonicalJson(share.shard ?? null) &&
      fs.readFileSync(plan.files.config, "utf8") === redactString(plan.config.text)
    );
  } catch {
    return false;
  }
}

/**
 * config.yaml and run.json: what made the run, the run key, and the cells this folder holds.
 * With `keepCurrent` (nothing left to run), a run.json that already records this plan is
 * left as it is: it names the tools that made the results, and asking them costs a second.
 */
export async function writeRunRecord(plan: ExperimentPlan, share: RunShare = { cells: plan.order }, options: { keepCurrent?: boolean } = {}): Promise<void> {
  const { config, files } = plan;
  if (options.keepCurrent && recordsThisRun(plan, share)) return;
  fs.mkdirSync(files.dir, { recursive: true });
  writeFileAtomicSync(files.config, redactString(config.text));
  const provenance = await reproducibilityRecord(config, modelSpecsOf(plan));
  const record = {
    ...provenance,
    runKey: plan.runKey,
    loadedWith: config.loadedWith,
    // The cells of this config in this folder: a report counts these only, never a folder left by an earlier config.
    cells: share.cells,
    ...(share.shard ? { shard: share.shard, allCells: plan.order } : {}),
  };
  writeFileAtomicSync(files.record, `${redactString(JSON.stringify(record, null, 2))}\n`);
}

export function modelSpecsOf(plan: ExperimentPlan, keys?: readonly string[]): ModelSpec[] {
  const arms = keys ? new Set(keys.map((key) => plan.cells.get(key)!.arm.name)) : undefined;
  return [...plan.specs.entries()].filter(([arm]) => !arms || arms.has(arm)).flatMap(([, entry]) => [entry.drafter, ...(entry.critic ? [entry.critic] : [])]);
}

/** One clear error before any work beats the same one in every cell. */
export async function preflightModels(plan: ExperimentPlan, keys: readonly string[]): Promise<void> {
  if (plan.config.cache === "replay") return;
  const needed = new Map<string, ModelSpec>();
  for (const spec of modelSpecsOf(plan, keys)) needed.set(`${spec.name} ${spec.baseURL ?? ""}`, spec);
  for (const spec of needed.values()) await preflightModel(spec);
}

/** Which cell a record is of. */
function cellIdentity(key: string, cell: Cell) {
  const kind = armKindLabel(cell.arm.kind, armFeedback(cell.arm));
  return { version: CELL_RECORD_VERSION, cellKey: key, arm: cell.arm.name, kind, repeat: cell.repeat, taskId: cell.task.id } as const;
}

/** A cell's record from what its graph produced. */
export function cellRecordOf(key: string, cell: Cell, values: CellValues): CellRecord {
  const produced = values.produced!;
  const evaluation = values.evaluation!;
  const error = produced.error
    ? { ...produced.error, stage: "generate" as const }
    : evaluation.error
      ? { ...evaluation.error, stage: "evaluate" as const }
      : undefined;
  return {
    ...cellIdentity(key, cell),
    status: produced.status === "made" && evaluation.status !== "failed" ? "finished" : "failed",
    produced,
    evaluation,
    iterations: values.iterations,
    ...(values.selfCheck ? { selfCheck: values.selfCheck } : {}),
    ...(error ? { error } : {}),
    finishedAt: new Date().toISOString(),
  };
}

/**
 * The record of a cell whose work could not finish at all (a queue job that failed every
 * attempt, or whose worker died more often than allowed): failed at `stage`, with the error.
 */
export function abandonedCellRecord(key: string, cell: Cell, stage: "generate" | "evaluate", error: ErrorRecord, produced?: CellOutcome): CellRecord {
  return {
    ...cellIdentity(key, cell),
    status: "failed",
    produced: produced ?? { status: "failed", error, usage: { ...NO_USAGE }, wallMs: 0 },
    evaluation: { status: "failed", error, wallMs: 0 },
    iterations: [],
    error: { ...error, stage },
    finishedAt: new Date().toISOString(),
  };
}
