/**
 * Where a command may write its output folder (`--out`, `--result`, a config's `out:`).
 * Refused, before anything is written: an empty path (it would silently mean the working
 * folder), a path that names an existing file, and the checkout itself or its source and
 * data folders (`src/`, `agents/`, `tasks/`, `prompts/`, `configs/`), where a run's pages
 * and records would mix with the project's files and a later clean-up would take them.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { IwrError } from "../errors.ts";

/** The checkout: this file is `<checkout>/src/files/output-folder.ts`. */
const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const PROTECTED = ["src", "agents", "tasks", "prompts", "configs"] as const;

/** At most this much of a value is quoted in a message. */
const SHOWN_CHARS = 200;

const shown = (value: string) => (value.length > SHOWN_CHARS ? `'${value.slice(0, SHOWN_CHARS)}…' (${value.length} characters)` : `'${value}'`);

/** Why `dir` cannot be an output folder, or undefined when it can. `checkout` is for tests. */
export function outputFolderProblem(dir: string, checkout: string = CHECKOUT): string | undefined {
  if (dir.trim() === "") return "it is empty (give a folder; an empty value would mean the working folder)";
  const resolved = path.resolve(dir);
  if (fs.existsSync(resolved) && !fs.statSync(resolved).isDirectory()) return `${shown(dir)} is a file, not a folder`;
  const real = (file: string) => {
    try {
      return fs.realpathSync(file);
    } catch {
      return file;
    }
  };
  // Compared after symbolic links, on the nearest part of the path that exists.
  let existing = resolved;
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  const target = path.join(real(existing), path.relative(existing, resolved));
  const root = real(checkout);
  if (target === root) return `${shown(dir)} is the checkout itself (${root}); write runs and results into a folder of their own, such as runs/ or results/`;
  for (const name of PROTECTED) {
    const inside = path.join(root, name);
    if (target === inside || target.startsWith(`${inside}${path.sep}`))
      return `${shown(dir)} is inside the project's ${name}/ folder; write runs and results into a folder of their own, such as runs/ or results/`;
  }
  return undefined;
}

/** Throws IwrError("CONFIG_INVALID") naming `source` (a flag or a config key) when `dir` cannot be an output folder. */
export function checkOutputFolder(dir: string, source: string): void {
  const problem = outputFolderProblem(dir);
  if (problem) throw new IwrError("CONFIG_INVALID", `${source}: ${problem}`, { source });
}
