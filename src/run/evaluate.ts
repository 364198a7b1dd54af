import { IwrError } from "../errors.ts";
import { createEvaluator, type EvaluatorChoice } from "../evaluator/create-evaluator.ts";
import { evaluateOneTask, type TaskRunOutcome } from "../evaluator/evaluate-candidate.ts";
import { rescore } from "../evaluator/rescore.ts";
import type { PairingMode } from "../evaluator/settings.ts";
import { runPipelined, trajectoryLength } from "../evaluator/task-pipeline.ts";
import { profileRules } from "../protocol.ts";
import { modelFolderName } from "../results/layout.ts";
import { loadTasks } from "../tasks/loader.ts";
import type { Task } from "../tasks/schema.ts";

export interface EvaluateRunOptions extends EvaluatorChoice {
  dataPath: string;
  resultDir: string;
  /** The candidates' model name; its folder is modelDirName(model), refused when unsafe. */
  model: string;
  /** Overrides the profile's pairing (recorded in eval.json's settings beside the profile). */
  pairing?: PairingMode;
  ids?: readonly number[];
  /** Re-evaluate tasks that already have an eval.json. */
  force?: boolean;
  /** Called after each task (progress display). */
  onTask?: (outcome: TaskRunOutcome) => void;
}

export interface EvaluateRunSummary {
  tasks: TaskRunOutcome[];
  reportPath?: string;
  wallMs: number;
}

function selectTasks(tasks: readonly Task[], ids: readonly number[] | undefined, dataPath: string): Task[] {
  if (!ids || ids.length === 0) return [...tasks];
  const known = new Set(tasks.map((task) => task.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new IwrError("CONFIG_INVALID", `--ids: task(s) ${unknown.join(", ")} are not in ${dataPath} (it has ${[...known].join(", ")})`);
  }
  const wanted = new Set(ids);
  return tasks.filter((task) => wanted.has(task.id));
}

export async function runEvaluation(options: EvaluateRunOptions): Promise<EvaluateRunSummary> {
  const started = Date.now();
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) throw new IwrError("CONFIG_INVALID", `--workers: expected a positive integer, got ${workers}`);
  modelFolderName(options.model);
  const tasks = selectTasks(
    await loadTasks(options.dataPath, { resolutionFallback: profileRules(options.profile ?? "corrected").missingResolution }),
    options.ids,
    options.dataPath,
  );
  const evaluator = await createEvaluator(options);
  try {
    const outcomes = await runPipelined(tasks, { workers, weight: trajectoryLength }, async (task) => {
      const { outcome } = await evaluateOneTask(task, { ...options, pairing: options.pairing ?? profileRules(evaluator.profile).pairing }, evaluator);
      options.onTask?.(outcome);
      return outcome;
    });
    let reportPath: string | undefined;
    if (outcomes.some((outcome) => outcome.status !== "failed")) {
      reportPath = rescore(options.resultDir, options.model, { taskOrder: tasks.map((task) => task.id) }).reportPath;
    }
    return { tasks: outcomes, ...(reportPath ? { reportPath } : {}), wallMs: Date.now() - started };
  } finally {
    await evaluator.close?.();
  }
}
