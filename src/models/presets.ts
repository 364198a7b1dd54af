/**
 * Finding a model's settings: `loadModelSpec("gpt-4o")` reads the preset from
 * configs/models/, `loadModelSpec("my-model.yaml")` reads that file, and any other
 * name gives the schema's defaults under that name, so a researcher can point the
 * tool at whatever model an endpoint serves (with a warning naming the presets, in
 * case the name was a typo).
 *
 * Preset string values may read the environment with `${VAR}` or `${VAR:-default}`
 * (the `local` preset takes its endpoint and model id this way). A variable that is
 * unset and has no default is an error naming the file and line.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LineCounter, isNode, parseDocument } from "yaml";
import { IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { fieldProblemText, formatZodIssue } from "../config/zod-issues.ts";
import { ModelSpecSchema, type ModelSpec, type ModelSpecInput } from "./spec.ts";

/** configs/models/ of this checkout (src/models/ → ../../configs/models). */
export const PRESETS_DIR = fileURLToPath(new URL("../../configs/models/", import.meta.url));

export interface LoadModelSpecOptions {
  /** Folder of preset files (tests point this elsewhere). */
  presetsDir?: string;
  /** Environment for `${VAR}` substitution (default process.env). */
  env?: NodeJS.ProcessEnv;
}

const YAML_FILE = /\.ya?ml$/i;
const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

type LineOf = (issuePath: readonly PropertyKey[]) => number | undefined;

function location(file: string, line: number | undefined): string {
  return line ? `${file}:${line}` : file;
}

/** Replaces `${VAR}` / `${VAR:-default}` in every string value, depth first. */
function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, file: string, lineOf: LineOf, at: PropertyKey[] = []): unknown {
  if (typeof value === "string") {
    return value.replace(ENV_REFERENCE, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      throw new IwrError("CONFIG_INVALID", `${location(file, lineOf(at))}: ${at.join(".")}: environment variable ${name} is not set (write \${${name}:-default} to give a default)`, { file });
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => substituteEnv(item, env, file, lineOf, [...at, index]));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, substituteEnv(inner, env, file, lineOf, [...at, key])]));
  }
  return value;
}

interface PresetFile {
  file: string;
  data: Record<string, unknown>;
  lineOf: LineOf;
}

function readPresetFile(file: string): PresetFile {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `cannot read model file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { file });
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const firstError = document.errors[0];
  if (firstError) {
    const line = firstError.linePos?.[0]?.line;
    throw new IwrError("CONFIG_INVALID", `${location(file, line)}: not valid YAML: ${firstError.message.split("\n")[0]}`, { file });
  }
  const lineOf: LineOf = (issuePath) => {
    // A missing key has no node: walk up to the nearest one that exists.
    for (let depth = issuePath.length; depth >= 0; depth--) {
      const keys = issuePath.slice(0, depth).map((part) => (typeof part === "symbol" ? String(part) : part));
      const node = depth === 0 ? document.contents : document.getIn(keys, true);
      if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
    }
    return undefined;
  };
  const data: unknown = document.toJS();
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new IwrError("CONFIG_INVALID", `${file}: expected a mapping of model settings, got ${Array.isArray(data) ? "a list" : String(data)}`, { file });
  }
  return { file, data: data as Record<string, unknown>, lineOf };
}

function validate(input: unknown, source: string, lineOf: LineOf): ModelSpec {
  const result = ModelSpecSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    // An unexpected key has the mapping as its path; its own line is more useful.
    const at = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
    return `${location(source, lineOf(at))}: ${fieldProblemText(formatZodIssue(issue, input))}`;
  });
  throw new IwrError("CONFIG_INVALID", `invalid model settings:\n  ${problems.join("\n  ")}`, { file: source, problems });
}

/** Every preset file's path and declared name (the file name when it declares none). */
export function listModelPresets(presetsDir = PRESETS_DIR): Array<{ name: string; file: string }> {
  if (!fs.existsSync(presetsDir)) return [];
  return fs
    .readdirSync(presetsDir)
    .filter((entry) => YAML_FILE.test(entry))
    .sort()
    .map((entry) => {
      const file = path.join(presetsDir, entry);
      const declared = readPresetFile(file).data.name;
      return { name: typeof declared === "string" ? declared : entry.replace(YAML_FILE, ""), file };
    });
}

function findPresetFile(name: string, presetsDir: string): string | undefined {
  const wanted = name.toLowerCase();
  // File names follow preset names, so this usually finds it without parsing every file.
  const direct = [".yaml", ".yml"].map((ext) => path.join(presetsDir, `${wanted}${ext}`)).find((file) => fs.existsSync(file));
  if (direct) return direct;
  return listModelPresets(presetsDir).find((preset) => preset.name.toLowerCase() === wanted)?.file;
}

/**
 * A model's spec by preset name (case-insensitive), by YAML file path, or, for an
 * unknown name, the defaults under that name. `overrides` (e.g. from CLI flags) win
 * over the file. Throws IwrError("CONFIG_INVALID") with file:line for bad settings.
 */
export function loadModelSpec(nameOrFile: string, overrides: Partial<ModelSpecInput> = {}, options: LoadModelSpecOptions = {}): ModelSpec {
  const presetsDir = options.presetsDir ?? PRESETS_DIR;
  const env = options.env ?? process.env;
  // An override left undefined (an unused CLI flag) must not replace the preset's value.
  overrides = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
  const file = YAML_FILE.test(nameOrFile) ? path.resolve(nameOrFile) : findPresetFile(nameOrFile, presetsDir);
  if (file === undefined) {
    const known = listModelPresets(presetsDir).map((preset) => preset.name);
    log("models").warn(`no preset named '${nameOrFile}': using default settings (known presets: ${known.join(", ") || "none"})`);
    return validate({ ...overrides, name: overrides.name ?? nameOrFile }, `model '${nameOrFile}'`, () => undefined);
  }
  const preset = readPresetFile(file);
  const data = substituteEnv(preset.data, env, file, preset.lineOf) as Record<string, unknown>;
  const merged = { ...data, ...overrides, name: overrides.name ?? data.name ?? path.basename(file).replace(YAML_FILE, "") };
  // Overridden fields have no line in the file, so only the file's own fields get one.
  const lineOf: LineOf = (issuePath) => (issuePath[0] !== undefined && String(issuePath[0]) in overrides ? undefined : preset.lineOf(issuePath));
  return validate(merged, file, lineOf);
}
