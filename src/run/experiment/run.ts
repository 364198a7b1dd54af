/**
 * `iwr run <config.yaml>`: every (task, arm, repeat) cell of an experiment through the
 * cell graph (agents/experiment: the arm's generator, then the fixed evaluator), a few
 * cells at a time, into one run folder; then the report.
 *
 * Resume: a cell is finished when its cell.json carries the cell's key (the arm's
 * settings, the repeat, the task's content and the evaluator's settings); a rerun skips
 * it, so a warm rerun makes no model call and no replay. A cell without cell.json (a run
 * killed midway) is run again, and its parts resume on their own terms (a single-pass
 * page made by the same request is kept; the agent continues from its checkpoint; an
 * eval.json that scored the same page is kept). A failed cell is finished too, with its
 * error recorded; `retryErrors` runs the failed ones again. Every file is written
 * atomically.
 *
 * Repeats: model and module arms run `repeats` times per task, each repeat a new sample
 * (the repeat index is part of every request's cache key). Calibration arms and pages
 * made elsewhere are deterministic and run once.
 */
import { profileRules } from "../../protocol.ts";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pLimit from "p-limit";
import { buildCellGraph, type CellValues } from "../../../agents/experiment/graph.ts";
import type { PageGenerator } from "../../../agents/module-contract.ts";
import { CELL_RECORD_VERSION, readCellRecord, type CellRecord } from "../../results/cell-record.ts";
import { IwrError, errorMessage } from "../../errors.ts";
import { taskKey } from "../../evaluator/eval-keys.ts";
import { writeFileAtomic, writeFileAtomicSync } from "../../files/atomic.ts";
import { log } from "../../log/logger.ts";
import { redactString } from "../../log/redact.ts";
import { canonicalJson, loadModelSpec, preflightModel, type ModelSpec } from "../../models/index.ts";
import { modelFolderName, RESULT_FILES, runFiles, type RunFiles } from "../../results/layout.ts";
import { publicModelSpec } from "../generate.ts";
import { createEvaluator } from "../evaluate.ts";
import { createVisualMetric } from "../../evaluator/metrics/visual.ts";
import { loadTasks } from "../../tasks/loader.ts";
import type { Task } from "../../tasks/schema.ts";
import { cellFolderOf, type ArmResources, type Cell } from "./arms.ts";
import type { Arm, ExperimentConfig } from "./config.ts";
import { loadModuleGenerator } from "./module-arm.ts";
import { cellWork } from "./cell-work.ts";
import { reproducibilityRecord } from "./provenance.ts";

const logger = log("experiment");

export type RunEvent =
  | { type: "start"; cells: number; pending: number; runDir: string }
  | { type: "cell"; record: CellRecord; done: number; pending: number; failed: number; costUsd: number; tokens: number; elapsedMs: number };

export interface RunExperimentOptions {
  /** Run failed cells again (default: a failed cell is finished, its error kept). */
  retryErrors?: boolean;
  cacheDir?: string;
  statesCacheDir?: string;
  onEvent?: (event: RunEvent) => void;
  /** Set to stop starting new cells (SIGINT); cells in progress finish. */
  signal?: AbortSignal;
  /** A module generator's time limit per cell (default 10 minutes). */
  moduleTimeoutMs?: number;
}

export interface RunSummary {
  runDir: string;
  files: RunFiles;
  cells: CellRecord[];
  ran: number;
  skipped: number;
  failed: number;
  /** Cells left without a record (the run was stopped): a rerun runs them. */
  unfinished: number;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function selectTasks(config: ExperimentConfig, tasks: readonly Task[]): Task[] {
  const { ids, interaction, visual } = config.filters;
  if (ids) {
    const known = new Set(tasks.map((task) => task.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) config.fail([{ where: config.where(["tasks", "ids"]), message: `tasks.ids: task(s) ${unknown.join(", ")} are not in ${config.taskFile} (it has ${[...known].join(", ")})` }]);
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
  return createHash("sha256").update(await fs.promises.readFile(file)).digest("hex");
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
  const specs = new Map<string, { drafter: ModelSpec; critic?: ModelSpec }>();
  const modules = new Map<string, PageGenerator>();
  const problems: Array<{ where: string; message: string }> = [];
  for (const [index, arm] of config.arms.entries()) {
    try {
      if (arm.model && arm.parsed.type !== "results") {
        const overrides = arm.baseURL ? { baseURL: arm.baseURL } : {};
        specs.set(arm.name, { drafter: loadModelSpec(arm.model, overrides), ...(arm.critic ? { critic: loadModelSpec(arm.critic, overrides) } : {}) });
      }
      if (arm.parsed.type === "module") modules.set(arm.name, await loadModuleGenerator(arm.parsed.file, `arms[${index}].kind`));
      if (arm.parsed.type === "results" && !fs.existsSync(arm.parsed.dir)) throw new IwrError("CONFIG_INVALID", `arms[${index}].kind: results folder ${arm.parsed.dir} does not exist`);
    } catch (error) {
      problems.push({ where: config.where(["arms", index, arm.parsed.type === "module" || arm.parsed.type === "results" ? "kind" : "model"]), message: errorMessage(error) });
    }
  }
  if (problems.length > 0) config.fail(problems);
  return { specs, modules };
}

/** Runs the experiment; a config or environment problem throws before any work, a cell's failure is recorded and the run goes on. */
export async function runExperiment(config: ExperimentConfig, options: RunExperimentOptions = {}): Promise<RunSummary> {
  const started = Date.now();
  const files = runFiles(config.out);
  const tasks = selectTasks(config, await loadTasks(config.taskFile, { resolutionFallback: profileRules(config.evaluator.protocol).missingResolution }));
  const { specs, modules } = await loadArmResources(config);

  // Every cell, keyed by what would make its result differ: the arm's settings and the
  // content behind them (prompt and module files, the loaded model specs, a page taken
  // from elsewhere), the repeat, the task (its line, checkpoints, assets and video) and
  // the evaluator's settings. Paths are not part of it: a moved checkout keeps its cells.
  const evaluatorKey = canonicalJson({ ...config.evaluator, selfCheck: config.selfCheck });
  const cells = new Map<string, Cell>();
  const order: string[] = [];
  const taskKeys = new Map<number, string>(
    await Promise.all(tasks.map(async (task) => [task.id, sha256(`${await taskKey(task)}:${await fileSha256(task.inputs.videoPath)}`)] as const)),
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
        const key = sha256(canonicalJson({ arm: armKey, repeat, task: taskKeys.get(task.id), evaluator: evaluatorKey, source })).slice(0, 24);
        cells.set(key, { arm, repeat, task, resultDir: files.armResults(arm.name, repeat), dir: files.cellDir(arm.name, repeat, task.id, cellFolderOf(arm, entry?.drafter.name)) });
        order.push(key);
      }
    }
  }
  const finished = new Map<string, CellRecord>();
  for (const key of order) {
    const record = readCellRecord(files.cellRecord(cells.get(key)!.dir));
    if (record?.cellKey === key && (record.status === "finished" || !options.retryErrors)) finished.set(key, record);
  }
  const pending = order.filter((key) => !finished.has(key));

  fs.mkdirSync(files.dir, { recursive: true });
  writeFileAtomicSync(files.config, redactString(config.text));
  const provenance = await reproducibilityRecord(config, [...specs.values()].flatMap((entry) => [entry.drafter, ...(entry.critic ? [entry.critic] : [])]));
  // The cells of this config: a report counts these only, never a folder left by an earlier config.
  writeFileAtomicSync(files.record, `${redactString(JSON.stringify({ ...provenance, cells: order }, null, 2))}\n`);
  options.onEvent?.({ type: "start", cells: order.length, pending: pending.length, runDir: files.dir });

  const records = new Map(finished);
  let failed = 0;
  let costUsd = 0;
  let tokens = 0;
  if (pending.length > 0) {
    // One clear error before any work beats the same one in every cell.
    if (config.cache !== "replay") {
      const needed = new Map<string, ModelSpec>();
      for (const key of pending) {
        const entry = specs.get(cells.get(key)!.arm.name);
        for (const spec of entry ? [entry.drafter, ...(entry.critic ? [entry.critic] : [])] : []) needed.set(`${spec.name} ${spec.baseURL ?? ""}`, spec);
      }
      for (const spec of needed.values()) await preflightModel(spec);
    }
    const evaluator = await createEvaluator({
      profile: config.evaluator.protocol,
      judge: config.evaluator.judge,
      grounding: config.evaluator.grounding,
      judgeModel: config.evaluator.judgeModel,
      judgeRepeats: config.evaluator.judgeRepeats,
      ...(config.evaluator.baseURL ? { baseURL: config.evaluator.baseURL } : {}),
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      workers: config.concurrency,
    });
    const controller = new AbortController();
    const stop = () => controller.abort();
    options.signal?.addEventListener("abort", stop);
    const resources: ArmResources = {
      specs,
      modules,
      cacheMode: config.cache,
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}),
      signal: controller.signal,
      log: (message) => logger.info(message),
      moduleTimeoutMs: options.moduleTimeoutMs ?? 10 * 60_000,
      protocol: config.evaluator.protocol,
    };
    const selfCheck = config.selfCheck === "given" ? { metric: await createVisualMetric(), ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}) } : undefined;
    const work = cellWork({ cells, resources, evaluator, pairing: config.evaluator.pairing, ...(selfCheck ? { selfCheck } : {}) });
    const graph = buildCellGraph();
    const limit = pLimit(config.concurrency);
    let done = 0;
    try {
      await Promise.all(
        pending.map((key) =>
          limit(async () => {
            if (controller.signal.aborted) return;
            const cell = cells.get(key)!;
            const values = (await graph.invoke({ cellKey: key }, { context: { work } })) as CellValues;
            const produced = values.produced!;
            const evaluation = values.evaluation!;
            const error = produced.error
              ? { ...produced.error, stage: "generate" as const }
              : evaluation.error
                ? { ...evaluation.error, stage: "evaluate" as const }
                : undefined;
            const record: CellRecord = {
              version: CELL_RECORD_VERSION,
              cellKey: key,
              arm: cell.arm.name,
              kind: cell.arm.kind,
              repeat: cell.repeat,
              taskId: cell.task.id,
              status: produced.status === "made" && evaluation.status !== "failed" ? "finished" : "failed",
              produced,
              evaluation,
              iterations: values.iterations,
              ...(values.selfCheck ? { selfCheck: values.selfCheck } : {}),
              ...(error ? { error } : {}),
              finishedAt: new Date().toISOString(),
            };
            // A cell cut short by the stop (an agent stopped at a checkpoint, a draft's scoring or
            // self-check broken by it) is unfinished, not failed: no cell.json, a rerun resumes it.
            const broken = record.status === "failed" || record.iterations.some((entry) => entry.error) || record.selfCheck?.error !== undefined;
            if (controller.signal.aborted && broken) return;
            await writeFileAtomic(files.cellRecord(cell.dir), `${redactString(JSON.stringify(record, null, 2))}\n`);
            records.set(key, record);
            done += 1;
            if (record.status === "failed") failed += 1;
            costUsd += produced.usage.costUsd;
            tokens += produced.usage.inputTokens + produced.usage.outputTokens;
            options.onEvent?.({ type: "cell", record, done, pending: pending.length, failed, costUsd, tokens, elapsedMs: Date.now() - started });
          }),
        ),
      );
    } finally {
      options.signal?.removeEventListener("abort", stop);
      await evaluator.close?.();
    }
  }
  const all = order.flatMap((key) => (records.has(key) ? [records.get(key)!] : []));
  return {
    runDir: files.dir,
    files,
    cells: all,
    ran: all.length - finished.size,
    skipped: finished.size,
    failed: all.filter((record) => record.status === "failed").length,
    unfinished: order.length - all.length,
  };
}
