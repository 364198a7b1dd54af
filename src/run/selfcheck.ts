/**
 * `iwr selfcheck`: the self-check of every task's candidate in a results folder, from
 * the tasks' inputs only (the task folders may lack checkpoints/), writing
 * `<result>/<id>/<model-dir>/selfcheck.json` beside each page.
 *
 * The actions come from `--actions <file>` (the agent's own, "inferred"), or, as the
 * labelled ablation `--trajectory given`, from each task line's action descriptions
 * (type, description, text, key: never its assertions or checkpoints).
 */
import fs from "node:fs";
import { z } from "zod";
import { defaultPageMemoryLimitMiB } from "../browser/host.ts";
import { closeSharedBrowser } from "../browser/launch.ts";
import { readYamlSource } from "../config/yaml-source.ts";
import { type ErrorRecord, errorMessage, IwrError, toErrorRecord } from "../errors.ts";
import { createPageSlots, runPipelined } from "../evaluator/task-pipeline.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import { ocrPoolSizeFor, setOcrPoolSize, shutdownOcr } from "../metrics/ocr.ts";
import { createVisualMetric } from "../metrics/visual.ts";
import { type ReplayAction, replayActionOf } from "../replay/replay.ts";
import { candidateDirFor, candidateFiles } from "../results/layout.ts";
import { runSelfCheck, type SelfCheckRecord, type Trajectory } from "../selfcheck/self-check.ts";
import { ACTION_TYPES } from "../tasks/inputs.ts";
import { loadTasks } from "../tasks/loader.ts";

const logger = log("selfcheck");

const ActionListSchema = z.array(
  z.strictObject({
    type: z.enum(ACTION_TYPES),
    description: z.string().min(1),
    text: z.string().optional(),
    key: z.string().optional(),
  }),
);
/** `--actions` file: task id → its actions, in JSON or YAML. */
export const InferredActionsSchema = z.record(z.string().regex(/^\d+$/, { message: "keys are task ids" }), ActionListSchema);

export function loadInferredActions(file: string): Map<number, ReplayAction[]> {
  const parsed = readYamlSource(file, { code: "CONFIG_INVALID", what: "actions file", expected: "a mapping of task id to actions" }).validate(
    InferredActionsSchema,
  );
  return new Map(Object.entries(parsed).map(([id, actions]) => [Number(id), actions.map((action) => ({ ...action }))]));
}

export interface SelfCheckRunOptions {
  dataPath: string;
  resultDir: string;
  model: string;
  trajectory: Trajectory;
  actionsFile?: string;
  ids?: readonly number[];
  workers?: number;
  statesCacheDir?: string;
}

export interface SelfCheckOutcome {
  taskId: number;
  status: "checked" | "failed";
  selfScore?: number;
  candidateDir: string;
  error?: ErrorRecord;
}

export async function runSelfCheckRun(options: SelfCheckRunOptions): Promise<SelfCheckOutcome[]> {
  if (options.trajectory === "inferred" && !options.actionsFile) {
    throw new IwrError(
      "CONFIG_INVALID",
      "--trajectory inferred needs --actions <file> (task id → actions); --trajectory given uses the tasks' own action descriptions",
    );
  }
  const inferred = options.actionsFile ? loadInferredActions(options.actionsFile) : undefined;
  const workers = options.workers ?? 1;
  // Inputs only: a task folder without checkpoints/ is fine here.
  let tasks = await loadTasks(options.dataPath, { needsCheckpoints: false });
  if (options.ids && options.ids.length > 0) {
    const wanted = new Set(options.ids);
    const unknown = options.ids.filter((id) => !tasks.some((task) => task.id === id));
    if (unknown.length > 0) throw new IwrError("CONFIG_INVALID", `--ids: task(s) ${unknown.join(", ")} are not in ${options.dataPath}`);
    tasks = tasks.filter((task) => wanted.has(task.id));
  }
  if (inferred) {
    const missing = tasks.filter((task) => !inferred.has(task.id)).map((task) => task.id);
    if (missing.length > 0) throw new IwrError("CONFIG_INVALID", `${options.actionsFile}: no actions for task(s) ${missing.join(", ")}`);
  }
  setOcrPoolSize(ocrPoolSizeFor(workers));
  const metric = await createVisualMetric();
  const pageSlots = createPageSlots(workers);
  try {
    const actionsOf = (task: (typeof tasks)[number]): ReplayAction[] => inferred?.get(task.id) ?? task.line.action_sequence.map(replayActionOf);
    return await runPipelined(tasks, { workers, weight: (task) => actionsOf(task).length }, async (task): Promise<SelfCheckOutcome> => {
      const candidateDir = candidateDirFor(options.resultDir, task.id, options.model);
      // Given: the line's action descriptions only (type, description, text, key), never its assertions.
      const actions = actionsOf(task);
      try {
        const page = candidateFiles(candidateDir).page;
        if (!fs.existsSync(page))
          throw new IwrError("CANDIDATE_MISSING", `no candidate page at ${page} (write one with iwr generate or iwr mutate, or check --model)`);
        const record: SelfCheckRecord = await runSelfCheck({
          inputs: task.inputs,
          actions,
          trajectory: options.trajectory,
          candidateDir,
          metric,
          pageSlots,
          memoryLimitMiB: defaultPageMemoryLimitMiB(workers),
          ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}),
        });
        return { taskId: task.id, status: "checked", selfScore: record.selfScore, candidateDir };
      } catch (error) {
        logger.error(`task ${task.id}: self-check failed: ${errorMessage(error)}`);
        const failure = toErrorRecord(error);
        writeFileAtomicSync(candidateFiles(candidateDir).selfCheckError, `${redactString(JSON.stringify({ taskId: task.id, error: failure }, null, 2))}\n`);
        return { taskId: task.id, status: "failed", candidateDir, error: failure };
      }
    });
  } finally {
    await closeSharedBrowser();
    await shutdownOcr();
  }
}
