/**
 * Reading a task file line by line: JSON syntax, the task line schema and unique
 * ids. Every problem is collected; a bad line never hides the lines after it.
 */
import fs from "node:fs/promises";
import { fieldProblemText, formatZodIssue } from "../config/zod-issues.ts";
import { TaskLineSchema, type TaskLine } from "./schema.ts";
import type { TaskProblem } from "./problems.ts";

export interface TaskLineEntry {
  /** 1-based line number in the file. */
  line: number;
  task: TaskLine;
}

export interface TaskLinesResult {
  entries: TaskLineEntry[];
  problems: TaskProblem[];
  /** False when the file itself could not be read (missing, a folder, ...). */
  fileRead: boolean;
}

async function readText(file: string): Promise<{ text?: string; problem?: string }> {
  try {
    return { text: await fs.readFile(file, "utf8") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { problem: "file not found" };
    if (code === "EISDIR") return { problem: "is a folder, expected a .jsonl task file" };
    return { problem: `cannot read the file: ${(error as Error).message}` };
  }
}

/** V8 names a character offset ("at position 12"); a column reads better next to a line number. */
function jsonErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/ (?:in JSON )?at position (\d+)/, (_match, offset: string) => ` at column ${Number(offset) + 1}`);
}

function integerId(value: unknown): number | undefined {
  if (value === null || typeof value !== "object" || !("id" in value)) return undefined;
  const id = (value as { id: unknown }).id;
  return typeof id === "number" && Number.isInteger(id) ? id : undefined;
}

export async function readTaskLines(file: string): Promise<TaskLinesResult> {
  const { text, problem } = await readText(file);
  if (text === undefined) return { entries: [], problems: [{ file, message: problem ?? "cannot read the file" }], fileRead: false };

  const entries: TaskLineEntry[] = [];
  const problems: TaskProblem[] = [];
  const firstLineOfId = new Map<number, number>();
  let taskLines = 0;

  // One task per line. Blank lines (between tasks, or the trailing newline) are
  // allowed and skipped: people separate groups of tasks with them, and they carry
  // no task, so there is nothing to lose. A BOM at the start is tolerated too.
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    if (raw.trim() === "") continue;
    taskLines++;

    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      problems.push({ file, line, message: `not valid JSON: ${jsonErrorText(error)}` });
      continue;
    }

    const id = integerId(value);
    if (id !== undefined) {
      const first = firstLineOfId.get(id);
      if (first !== undefined) {
        problems.push({ file, line, taskId: id, path: "id", message: `id ${id} is used twice (first on line ${first})` });
        continue;
      }
      firstLineOfId.set(id, line);
    }

    const parsed = TaskLineSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = formatZodIssue(issue, value);
        problems.push({
          file,
          line,
          ...(id !== undefined ? { taskId: id } : {}),
          ...(field.path ? { path: field.path } : {}),
          message: field.path ? field.message : fieldProblemText(field),
        });
      }
      continue;
    }
    entries.push({ line, task: parsed.data });
  }

  if (taskLines === 0) problems.push({ file, message: "the file holds no tasks (it is empty)" });
  return { entries, problems, fileRead: true };
}
