/**
 * Adding a task line to a `<name>.jsonl` file. The whole file is rewritten through a
 * temp file in the same folder and a rename, so a reader never sees half a line and a
 * crash leaves either the old file or the new one. Other lines are kept byte for byte;
 * lines are ordered by id.
 */
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { type TaskLine, TaskLineSchema } from "./schema.ts";

interface ExistingLine {
  readonly id: number;
  readonly text: string;
}

function readExistingLines(jsonlPath: string): ExistingLine[] {
  let text: string;
  try {
    text = fs.readFileSync(jsonlPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new IwrError("IO", `cannot read ${jsonlPath}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { file: jsonlPath });
  }
  const lines: ExistingLine[] = [];
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    let id: unknown;
    try {
      id = (JSON.parse(line) as { id?: unknown }).id;
    } catch {
      // Rewriting a file we cannot read would silently drop a line: refuse instead.
      throw new IwrError("TASK_INVALID", `${jsonlPath}:${index + 1}: not valid JSON; fix or remove the line before adding tasks`, {
        file: jsonlPath,
        line: index + 1,
      });
    }
    if (typeof id !== "number" || !Number.isInteger(id)) {
      throw new IwrError("TASK_INVALID", `${jsonlPath}:${index + 1}: id: expected an integer, got ${JSON.stringify(id)}`, { file: jsonlPath, line: index + 1 });
    }
    lines.push({ id, text: line });
  });
  return lines;
}

/** Ids already present in the file (empty when it does not exist). */
export function readTaskIds(jsonlPath: string): number[] {
  return readExistingLines(jsonlPath).map((line) => line.id);
}

/** The next id after the highest one in the file; 1 for a new file. */
export function nextFreeTaskId(jsonlPath: string): number {
  const ids = readTaskIds(jsonlPath);
  return ids.length === 0 ? 1 : Math.max(...ids) + 1;
}

export interface WriteTaskLineOptions {
  /** Replace a line with the same id instead of refusing. */
  readonly replace?: boolean;
}

/**
 * Validates `line` with TaskLineSchema and writes it into `jsonlPath` (created when
 * missing). Throws TASK_INVALID for a bad line or a duplicate id without `replace`.
 */
export function writeTaskLine(jsonlPath: string, line: unknown, options: WriteTaskLineOptions = {}): TaskLine {
  const parsed = TaskLineSchema.safeParse(line);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`);
    throw new IwrError("TASK_INVALID", `task line is invalid: ${problems.join("; ")}`, { problems });
  }
  const existing = readExistingLines(jsonlPath);
  const id = parsed.data.id;
  if (existing.some((entry) => entry.id === id) && !options.replace) {
    throw new IwrError("TASK_INVALID", `${jsonlPath} already holds task id ${id}; pass --force to replace it`, { file: jsonlPath, id });
  }
  const kept = existing.filter((entry) => entry.id !== id);
  // Write the input as given (not zod's output, which would add defaults) so the line round-trips.
  const lines = [...kept, { id, text: JSON.stringify(line) }].sort((a, b) => a.id - b.id);
  writeFileAtomicSync(path.resolve(jsonlPath), lines.map((entry) => entry.text).join("\n") + "\n");
  return parsed.data;
}
