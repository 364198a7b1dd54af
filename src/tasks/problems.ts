/**
 * One problem found in a task file, precise enough to act on:
 * "tasks/x.jsonl:7: action_sequence[2].type: expected one of Click|Type|Scroll|Press, got 'Tap'".
 */
import { IwrError } from "../errors.ts";

export interface TaskProblem {
  /** The .jsonl file, as the caller named it. */
  file: string;
  /** 1-based line in that file, when the problem belongs to one line. */
  line?: number;
  taskId?: number;
  /** Field path inside the task line, e.g. `action_sequence[2].type`. */
  path?: string;
  message: string;
}

export function formatProblem(problem: TaskProblem): string {
  const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`;
  return problem.path ? `${where}: ${problem.path}: ${problem.message}` : `${where}: ${problem.message}`;
}

/** File order, then line order; problems of the file itself first. */
export function sortProblems(problems: readonly TaskProblem[]): TaskProblem[] {
  return [...problems].sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0));
}

/** One error listing every problem, one per line. */
export function taskProblemsError(file: string, problems: readonly TaskProblem[]): IwrError {
  const lines = sortProblems(problems).map(formatProblem);
  const header = `${file}: ${problems.length} problem${problems.length === 1 ? "" : "s"} in the task file`;
  return new IwrError("TASK_INVALID", [header, ...lines].join("\n"), { file, problems: lines });
}
