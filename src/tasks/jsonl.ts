/**
 * Reading a task file line by line: JSON syntax, the task line schema and unique
 * ids. Every problem is collected; a bad line never hides the lines after it.
 */
import fs from "node:fs/promises";
import { fieldProblemText, formatZodIssue } from "../config/zod-issues.ts";
import type { TaskProblem } from "./problems.ts";
import { lineWarnings, type TaskLine, TaskLineSchema } from "./schema.ts";

export interface TaskLineEntry {
  /** 1-based line number in the file. */
  line: number;
  task: TaskLine;
}

export interface TaskLinesResult {
  entries: TaskLineEntry[];
  problems: TaskProblem[];
  /** What well-formed lines lack that the harness does without (see lineWarnings). */
  warnings: TaskProblem[];
  /** False when the file itself could not be read (missing, a folder, ...). */
  fileRead: boolean;
}

/** Lines that are not JSON are listed one by one up to this many; the rest are counted (a binary file is one big mistake). */
export const MAX_SYNTAX_PROBLEMS = 20;

/** Why bytes are not a UTF-8 text file, or undefined when they are. */
function notUtf8Text(bytes: Buffer): string | undefined {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return "the file is UTF-16 text; save it as UTF-8 (one JSON object per line)";
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) return `the file is not text (a NUL byte at offset ${nul}); expected UTF-8 JSON lines`;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return "the file is not valid UTF-8; expected UTF-8 JSON lines";
  }
  return undefined;
}

async function readText(file: string): Promise<{ text?: string; problem?: string }> {
  try {
    const bytes = await fs.readFile(file);
    const problem = notUtf8Text(bytes);
    return problem ? { problem } : { text: bytes.toString("utf8") };
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
  if (text === undefined) return { entries: [], problems: [{ file, message: problem ?? "cannot read the file" }], warnings: [], fileRead: false };

  const entries: TaskLineEntry[] = [];
  const problems: TaskProblem[] = [];
  const warnings: TaskProblem[] = [];
  const firstLineOfId = new Map<number, number>();
  let taskLines = 0;
  let syntaxProblems = 0;

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
      syntaxProblems += 1;
      if (syntaxProblems <= MAX_SYNTAX_PROBLEMS) problems.push({ file, line, message: `not valid JSON: ${jsonErrorText(error)}` });
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
    for (const warning of lineWarnings(value)) warnings.push({ file, line, taskId: parsed.data.id, ...warning });
  }

  if (syntaxProblems > MAX_SYNTAX_PROBLEMS) {
    problems.push({
      file,
      message: `${syntaxProblems - MAX_SYNTAX_PROBLEMS} more line(s) are not valid JSON either (${syntaxProblems} of ${taskLines}); is this a task file?`,
    });
  }
  if (taskLines === 0) problems.push({ file, message: "the file holds no tasks (it is empty)" });
  return { entries, problems, warnings, fileRead: true };
}
