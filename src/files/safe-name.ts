/**
 * The one rule for a name that becomes a folder or file name inside a folder we own
 * (a model's result folder, a cache folder, a report's file name): it must stay a
 * single plain path segment. Whatever the name came from — a flag, a preset's `name:`
 * key, an experiment's arm — it is checked here, before any work, and a refusal names
 * where the name came from.
 *
 * Refused: empty or blank names, "." and "..", path separators, NUL and other control
 * characters, a leading "." (hidden names are this project's temp files and would be
 * swept), and names longer than a file system allows. Also names that are one folder on
 * Linux but not elsewhere, so a run folder copied to Windows or macOS keeps every result:
 * Windows' reserved device names (CON, NUL, COM1…, also with an extension: nul.txt), a
 * trailing space or dot (Windows drops it), a name not in Unicode NFC form (macOS and
 * Windows may store it composed, so it and its composed twin would be one folder), and
 * bidirectional control characters (U+202E shows "evil‮txt.exe" as something else).
 */
import { IwrError, quoted } from "../errors.ts";

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
  if (WINDOWS_DEVICE.test(name)) return `'${name.split(".")[0]}' is a device name Windows reserves (with any extension)`;
  if (/[ .]$/.test(name)) return "it ends with a space or a dot (Windows drops it, making it another name's folder)";
  if (name.normalize("NFC") !== name)
    return "it is not in Unicode NFC form (its composed twin, which macOS and Windows may store instead, would be the same folder)";
  if (BIDI_CONTROL.test(name)) return "it contains a bidirectional control character (it would show as another name)";
  return undefined;
}

/** CON, PRN, AUX, NUL, COM0-9, LPT0-9 (and the superscript digits Windows also reserves), alone or before an extension. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;
/** U+061C, U+200E/F, U+202A–E, U+2066–9: they reorder how a name is shown. */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * `name` itself when it is a safe single path segment; otherwise an
 * IwrError("CONFIG_INVALID") naming `source` (a flag such as "--model", or a key such
 * as "configs/models/x.yaml: name").
 */
export function safeFolderName(name: string, source: string, derivedFrom?: string): string {
  const problem = folderNameProblem(name);
  if (problem === undefined) return name;
  const shown = derivedFrom !== undefined && derivedFrom !== name ? `${quoted(derivedFrom)} (folder name ${quoted(name)})` : quoted(name);
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
        `${entry.source} and ${earlier.source} give ${how} (${quoted(earlier.name)}, ${quoted(entry.name)}): their results would overwrite each other`,
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
