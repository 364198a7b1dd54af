/**
 * Prompt templates: `prompts/<name>.md`, a YAML front-matter block that names the
 * template and declares its variables, then the text with `{{variable}}` slots.
 *
 * Rendering is strict on purpose: a declared variable the text never uses, a slot that
 * is not declared, a value missing or one nobody asked for, and any `{{...}}` left in the
 * output are all errors. A template that silently keeps a placeholder is a prompt bug
 * that costs a whole experiment. The hash of the file is recorded with every result so a
 * number can be traced to the exact wording that produced it.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { IwrError } from "../errors.ts";
import { sha256Hex } from "../files/content-hash.ts";

/** The repository's `prompts/` folder. */
export const PROMPTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../prompts");

export interface Prompt {
  readonly name: string;
  readonly file: string;
  readonly variables: readonly string[];
  /** The text after the front matter, slots still in it. */
  readonly body: string;
  /** sha256 (hex) of the whole template file. */
  readonly hash: string;
}

export interface RenderedPrompt {
  text: string;
  hash: string;
}

export type PromptVariables = Readonly<Record<string, string | number>>;

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;
const SLOT = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const LEFTOVER_SLOT = /\{\{[^{}]*\}\}/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function promptError(file: string, message: string): IwrError {
  return new IwrError("PROMPT", `${file}: ${message}`, { file });
}

function slotNames(body: string): Set<string> {
  return new Set(Array.from(body.matchAll(SLOT), (match) => match[1] ?? ""));
}

/** Parse template text (the file's contents); `file` is used in messages only. */
export function parsePrompt(contents: string, file: string): Prompt {
  const match = FRONT_MATTER.exec(contents);
  if (!match) throw promptError(file, "expected a front-matter block ('---' lines) declaring name and variables");
  let meta: unknown;
  try {
    meta = parseYaml(match[1] ?? "");
  } catch (error) {
    throw promptError(file, `front matter is not valid YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) throw promptError(file, "front matter: expected a mapping with name and variables");
  const { name, variables } = meta as { name?: unknown; variables?: unknown };
  if (typeof name !== "string" || name.length === 0) throw promptError(file, `front matter: name: expected a non-empty string, got ${JSON.stringify(name)}`);
  const declared = variables ?? [];
  if (!Array.isArray(declared) || !declared.every((item): item is string => typeof item === "string" && VARIABLE_NAME.test(item))) {
    throw promptError(file, `front matter: variables: expected a list of identifiers, got ${JSON.stringify(variables)}`);
  }
  const duplicates = declared.filter((item, index) => declared.indexOf(item) !== index);
  if (duplicates.length > 0) throw promptError(file, `front matter: variables: declared twice: ${duplicates.join(", ")}`);

  const body = contents.slice(match[0].length);
  const used = slotNames(body);
  const undeclared = [...used].filter((slot) => !declared.includes(slot));
  if (undeclared.length > 0) throw promptError(file, `the text uses undeclared variable(s): ${undeclared.join(", ")}`);
  const unused = declared.filter((variable) => !used.has(variable));
  if (unused.length > 0) throw promptError(file, `declared variable(s) never used in the text: ${unused.join(", ")}`);
  const hash = sha256Hex(contents);
  return { name, file, variables: declared, body, hash };
}

/** Load `prompts/<name>.md` (or any template file when `dir` is given). */
export function loadPrompt(name: string, dir: string = PROMPTS_DIR): Prompt {
  if (!VARIABLE_NAME.test(name.replace(/-/g, "_"))) throw new IwrError("PROMPT", `invalid prompt name '${name}'`);
  const file = path.join(dir, `${name}.md`);
  let contents: string;
  try {
    contents = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new IwrError("PROMPT", `prompt '${name}' not found: cannot read ${file}`, { file }, { cause: error });
  }
  const prompt = parsePrompt(contents, file);
  if (prompt.name !== name) throw promptError(file, `front matter: name: expected '${name}' (the file's name), got '${prompt.name}'`);
  return prompt;
}

/**
 * A prompt template outside prompts/ (a researcher's variant): any file with the same
 * front matter. Its name need not match the file's; its hash is the file's, as always.
 */
export function loadPromptFile(file: string): Prompt {
  let contents: string;
  try {
    contents = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new IwrError("PROMPT", `prompt file ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { file }, { cause: error });
  }
  return parsePrompt(contents, file);
}

/** Fill every slot; fails on a missing or an unexpected value and on any slot left over. */
export function renderPrompt(prompt: Prompt, vars: PromptVariables): RenderedPrompt {
  const given = Object.keys(vars);
  const missing = prompt.variables.filter((variable) => !(variable in vars));
  if (missing.length > 0) throw promptError(prompt.file, `missing value(s) for variable(s): ${missing.join(", ")}`);
  const unused = given.filter((key) => !prompt.variables.includes(key));
  if (unused.length > 0) throw promptError(prompt.file, `value(s) given for variable(s) the template does not declare: ${unused.join(", ")}`);
  const text = prompt.body.replace(SLOT, (_slot, variable: string) => String(vars[variable]));
  const leftover = LEFTOVER_SLOT.exec(text);
  if (leftover) throw promptError(prompt.file, `rendered text still holds '${leftover[0]}'`);
  return { text, hash: prompt.hash };
}

/**
 * Fill the slots a template declares from a larger set of available values: for
 * templates a user may replace (`--prompts-dir`), whose copy may use fewer of them.
 * A declared variable that is not available is an error naming it.
 */
export function renderFromAvailable(prompt: Prompt, available: PromptVariables): RenderedPrompt {
  const unknown = prompt.variables.filter((variable) => !(variable in available));
  if (unknown.length > 0)
    throw promptError(
      prompt.file,
      `declares variable(s) this prompt cannot be given: ${unknown.join(", ")} (available: ${Object.keys(available).join(", ") || "none"})`,
    );
  return renderPrompt(prompt, Object.fromEntries(prompt.variables.map((variable) => [variable, available[variable]!])));
}

/**
 * Our template `name`, unless `overrideDir` holds a file of that name (`<dir>/<name>.md`,
 * e.g. a local copy of the harness's own text with our front matter): then that one.
 */
export function loadPromptOverridable(name: string, overrideDir?: string): Prompt {
  if (overrideDir && fs.existsSync(path.join(overrideDir, `${name}.md`))) return loadPrompt(name, overrideDir);
  return loadPrompt(name);
}
