/** `iwr mutate`: the mutants of each task's reference page, written in the results layout. */
import fs from "node:fs";
import { IwrError } from "../errors.ts";
import { mutantDir, mutantLadder, writeMutant } from "../mutants/ladder.ts";
import { type MutantSpec, mutantLabel, parseMutantSpec } from "../mutants/operators.ts";
import { loadTasks } from "../tasks/loader.ts";
import type { Task } from "../tasks/schema.ts";
import { referencePageHtml, referencePagePath, stageReferenceSiteFiles } from "./calibration.ts";

export interface MutateOptions {
  dataPath: string;
  resultDir: string;
  ids?: readonly number[];
  /** Operator specs ("freeze-after:2", "no-script"); default: each task's ladder. */
  operators?: readonly string[];
}

export interface WrittenMutant {
  taskId: number;
  label: string;
  spec: MutantSpec;
  dir: string;
}

export function writeTaskMutants(task: Task, resultDir: string, specs: readonly MutantSpec[]): WrittenMutant[] {
  return specs.map((spec) => {
    const dir = mutantDir(resultDir, task.id, spec);
    const html = referencePageHtml(task, dir);
    stageReferenceSiteFiles(task, dir);
    return {
      taskId: task.id,
      label: mutantLabel(spec),
      spec,
      dir: writeMutant(dir, html, spec, `reference page of task ${task.id} (${referencePagePath(task)})`),
    };
  });
}

export async function runMutate(options: MutateOptions): Promise<WrittenMutant[]> {
  // Parsed first: a misspelt operator is a usage error before anything is written.
  const specs = options.operators?.map(parseMutantSpec);
  let tasks = await loadTasks(options.dataPath);
  if (options.ids && options.ids.length > 0) {
    const unknown = options.ids.filter((id) => !tasks.some((task) => task.id === id));
    if (unknown.length > 0) throw new IwrError("CONFIG_INVALID", `--ids: task(s) ${unknown.join(", ")} are not in ${options.dataPath}`);
    tasks = tasks.filter((task) => options.ids?.includes(task.id));
  }
  fs.mkdirSync(options.resultDir, { recursive: true });
  return tasks.flatMap((task) => writeTaskMutants(task, options.resultDir, specs ?? mutantLadder(task.truth.actions.length)));
}
