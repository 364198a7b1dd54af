/**
 * The one rule for a name that becomes a folder or file name inside a folder we own
 * (a model's result folder, a cache folder, a report's file name): it must stay a
 * single plain path segment. Whatever the name came from — a flag, a preset's `name:`
 * key, an experiment's arm — it is checked here, before any work, and a refusal names
 * where the name came from.
 *
 * Refused: empty or blank names, "." and "..", path separators, NUL and other control
 * characters, a leading "." (hidden names are this project's temp files and would be
 * swept), and names longer than a file system allows.
 */
import { IwrError } from "../errors.ts";

/** Most file systems cap one name at 255 bytes; room is left for suffixes such as "_metrics.md" and "@agent". */
export const MAX_NAME_BYTES = 200;

/** Why `name` cannot be a path segment, or undefined when it can. */
export function folderNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "it is empty";
  if (name === "." || name === "..") return `'${name}' names a folder itself, not one inside it`;
  if (name.includes("/") || name.includes("\\")) return "it contains a path separator ('/' or '\\')";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(name)) return "it contains a NUL or another control character";
  if (name.startsWith(".")) return "it starts with '.' (hidden names are reserved for temporary files)";
  if (Buffer.byteLength(name, "utf8") > MAX_NAME_BYTES) return `it is longer than ${MAX_NAME_BYTES} bytes`;
  return undefined;
}

/**
 * `name` itself when it is a safe single path segment; otherwise an
 * IwrError("CONFIG_INVALID") naming `source` (a flag such as "--model", or a key such
 * as "configs/models/x.yaml: name").
 */
export function safeFolderName(name: string, source: string, derivedFrom?: string): string {
  const problem = folderNameProblem(name);
  if (problem === undefined) return name;
  const shown = derivedFrom !== undefined && derivedFrom !== name ? `'${derivedFrom}' (folder name '${name}')` : `'${name}'`;
  throw new IwrError("CONFIG_INVALID", `${source}: ${shown} cannot be used as a folder name: ${problem}`, { source, name });
}

/**
 * Refuses a set of names that would share a folder: equal, or equal but for letter case
 * (the same folder on case-insensitive file systems such as macOS's and Windows').
 */
export function assertDistinctFolderNames(entries: ReadonlyArray<{ name: string; source: string }>): void {
  const seen = new Map<string, { name: string; source: string }>();
  for (const entry of entries) {
    const key = entry.name.toLowerCase();
    const earlier = seen.get(key);
    if (earlier) {
      const how = earlier.name === entry.name ? "the same folder name" : "folder names that differ only by letter case";
      throw new IwrError(
        "CONFIG_INVALID",
        `${entry.source} and ${earlier.source} give ${how} ('${earlier.name}', '${entry.name}'): their results would overwrite each other`,
        { names: [earlier.name, entry.name] },
      );
    }
    seen.set(key, entry);
  }
}

/** The benchmark's folder name for a model (docs/protocol.md §2): lower-cased, "/" replaced by "__". */
export function modelDirName(name: string): string {
  return name.toLowerCase().replaceAll("/", "__");
}

/** modelDirName(model), refused (naming `source`) unless it is a safe single folder name. */
export function modelFolderName(model: string, source = "--model"): string {
  return safeFolderName(modelDirName(model), source, model);
}
