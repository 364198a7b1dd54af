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
import { readYamlSource, type YamlSource } from "../config/yaml-source.ts";
import { fieldProblemText, formatZodIssue } from "../config/zod-issues.ts";
import { IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { type ModelSpec, type ModelSpecInput, ModelSpecSchema } from "./spec.ts";

/** configs/models/ of this checkout (src/models/ → ../../configs/models). */
export const PRESETS_DIR = fileURLToPath(new URL("../../configs/models/", import.meta.url));

export interface LoadModelSpecOptions {
  /** Folder of preset files (tests point this elsewhere). */
  presetsDir?: string;
  /** Environment for `${VAR}` substitution (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Where the name came from, for messages (e.g. "--model"). */
  source?: string;
}

const YAML_FILE = /\.ya?ml$/i;

/** A preset file as a mapping of settings (positions kept for messages). */
function readPresetFile(file: string, env?: NodeJS.ProcessEnv): { source: YamlSource; data: Record<string, unknown> } {
  const source = readYamlSource(file, { code: "CONFIG_INVALID", what: "model file", expected: "a YAML mapping of model settings", ...(env ? { env } : {}) });
  const { data } = source;
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    source.fail([{ where: file, message: `expected a mapping of model settings, got ${Array.isArray(data) ? "a list" : String(data)}` }]);
  }
  return { source, data: data as Record<string, unknown> };
}

/** A spec from settings that came from no file (a bare model name, CLI overrides). */
function validateUnfiled(input: unknown, label: string): ModelSpec {
  const result = ModelSpecSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${label}: ${fieldProblemText(formatZodIssue(issue, input))}`);
  throw new IwrError("CONFIG_INVALID", `invalid model settings:\n  ${problems.join("\n  ")}`, { problems });
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
    return validateUnfiled({ ...overrides, name: overrides.name ?? nameOrFile }, `${options.source ?? "model"} '${nameOrFile}'`);
  }
  const preset = readPresetFile(file, env);
  const merged = { ...preset.data, ...overrides, name: overrides.name ?? preset.data.name ?? path.basename(file).replace(YAML_FILE, "") };
  // Overridden fields have no place in the file: their problems name the override instead.
  const overridden = ModelSpecSchema.safeParse(merged);
  if (overridden.success) return overridden.data;
  return preset.source.fail(
    overridden.error.issues.map((issue) => {
      const at = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
      const fromOverride = at[0] !== undefined && String(at[0]) in overrides;
      return {
        where: fromOverride ? `${file} (overridden by ${options.source ?? "an option"})` : preset.source.where(at),
        message: fieldProblemText(formatZodIssue(issue, merged)),
      };
    }),
  );
}
