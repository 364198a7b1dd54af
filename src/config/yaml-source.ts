/**
 * Reading one YAML file (a config, a model preset, an action script) with its source
 * positions kept, so every problem anywhere in the project is reported the same way:
 * "configs/x.yaml:4:15: model.temperature: expected number, got 'hot'". One reader
 * serves all three: syntax errors, an empty file, alias bombs (the yaml library's
 * resource limit) and unreadable files all name the file.
 *
 * Optional `${VAR}` interpolation in string values (configs and presets; action scripts
 * keep their text as written):
 * - `${NAME}` is the variable's value; unset is an error naming the variable.
 * - `${NAME:-default}` falls back to `default` when NAME is unset or empty.
 * - `$${` is a literal `${`.
 * - A value that is an unquoted scalar made of one `${...}` alone is re-read as YAML,
 *   so `port: ${PORT:-8080}` is a number and `headless: ${HEADLESS:-true}` a boolean;
 *   quote it to keep a string.
 * Keys are never interpolated: a file's shape does not depend on the environment.
 */
import fs from "node:fs";
import YAML, { type Document, isNode, isPair, isScalar, isSeq, LineCounter, type Scalar } from "yaml";
import type { z } from "zod";
import { errorMessage, IwrError, type IwrErrorCode } from "../errors.ts";
import { fieldProblemText, formatFieldPath, formatZodIssue } from "./zod-issues.ts";

export interface YamlReadOptions {
  /** The error code of every problem (CONFIG_INVALID for configs and presets, RECORDER for action scripts). */
  code: IwrErrorCode;
  /** What the file is, for the empty-file message ("a YAML mapping of model settings"). */
  expected?: string;
  /** Interpolate `${VAR}` from this environment; leave undefined to keep text as written. */
  env?: NodeJS.ProcessEnv;
}

export interface YamlSource {
  /** The file as named in messages. */
  readonly name: string;
  /** The document as plain data (after interpolation). */
  readonly data: unknown;
  /** "file:line:col" of the value at `path`; a missing one points at its nearest parent. */
  where(path: readonly PropertyKey[]): string;
  /** Throws IwrError(code) listing these problems, one per line. */
  fail(problems: ReadonlyArray<{ where: string; message: string }>): never;
  /** Validates `data` with `schema`; every issue becomes "where: field: expected X, got Y". */
  validate<T>(schema: z.ZodType<T>, data?: unknown): T;
}

type KeyPath = (string | number)[];

const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const REFERENCE_BODY = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;
const SOLE_REFERENCE = /^\$\{[^}]*\}$/;

/**
 * A YAML file this reader takes at most: configs, presets and action scripts are a few
 * kilobytes; a file of megabytes is a mistake or an attack (a 50 MB config of 1.5 million
 * arms ran V8 out of memory), refused before it is parsed.
 */
export const MAX_YAML_BYTES = 1024 * 1024;
/** Problems listed at most, and characters of each: a hostile file must not flood the terminal. */
const MAX_PROBLEMS_SHOWN = 30;
const MAX_PROBLEM_CHARS = 500;

function failWith(code: IwrErrorCode, name: string, problems: ReadonlyArray<{ where: string; message: string }>): never {
  const lines = problems.map((problem) => {
    const line = `${problem.where}: ${problem.message}`;
    return line.length > MAX_PROBLEM_CHARS ? `${line.slice(0, MAX_PROBLEM_CHARS)}… (${line.length} characters)` : line;
  });
  const shown = lines.slice(0, MAX_PROBLEMS_SHOWN);
  if (lines.length > shown.length) shown.push(`… and ${lines.length - shown.length} more`);
  const header = problems.length === 1 ? "" : `${name}: ${problems.length} problems\n`;
  throw new IwrError(code, `${header}${shown.join("\n")}`, { file: name, problems: shown });
}

function locate(name: string, lineCounter: LineCounter, offset: number | undefined): string {
  if (offset === undefined) return name;
  const { line, col } = lineCounter.linePos(offset);
  return `${name}:${line}:${col}`;
}

/** The key path of a node from its ancestors as `YAML.visit` hands them over. */
function keyPathOf(ancestors: readonly unknown[], node: unknown): KeyPath {
  const keys: KeyPath = [];
  ancestors.forEach((ancestor, index) => {
    if (isPair(ancestor)) {
      keys.push(isScalar(ancestor.key) ? String(ancestor.key.value) : String(ancestor.key));
    } else if (isSeq(ancestor)) {
      const child = index + 1 < ancestors.length ? ancestors[index + 1] : node;
      keys.push(ancestor.items.indexOf(child as (typeof ancestor.items)[number]));
    }
  });
  return keys;
}

function interpolate(text: string, env: NodeJS.ProcessEnv, report: (message: string) => void): string {
  return text.replace(REFERENCE, (match: string, body: string | undefined) => {
    if (match === "$${") return "${";
    if (body === undefined) {
      report(`'${text}' has a '\${' with no closing '}'`);
      return match;
    }
    const parts = REFERENCE_BODY.exec(body);
    if (!parts) {
      report(`'${match}' is not a variable reference: write \${NAME} or \${NAME:-default}`);
      return match;
    }
    const name = parts[1] ?? "";
    const fallback = parts[2];
    const value = env[name];
    if (fallback !== undefined) return value === undefined || value === "" ? fallback : value;
    if (value === undefined) {
      report(`environment variable ${name} is not set (set it, or give a default with \${${name}:-value})`);
      return match;
    }
    return value;
  });
}

/** A whole-value plain reference becomes a number or boolean when its text reads as one. */
function retype(substituted: string): string | number | boolean {
  try {
    const parsed: unknown = YAML.parse(substituted);
    return typeof parsed === "number" || typeof parsed === "boolean" ? parsed : substituted;
  } catch {
    return substituted;
  }
}

function interpolateDocument(doc: Document, name: string, lineCounter: LineCounter, env: NodeJS.ProcessEnv) {
  const problems: Array<{ where: string; message: string }> = [];
  YAML.visit(doc, {
    Scalar(key, node: Scalar, ancestors) {
      if (key === "key" || typeof node.value !== "string" || !node.value.includes("${")) return;
      const original = node.value;
      const keyPath = formatFieldPath(keyPathOf(ancestors, node));
      const where = locate(name, lineCounter, node.range?.[0]);
      let failed = false;
      const substituted = interpolate(original, env, (message) => {
        failed = true;
        problems.push({ where, message: keyPath ? `${keyPath}: ${message}` : message });
      });
      if (failed) return;
      node.value = node.type === "PLAIN" && SOLE_REFERENCE.test(original) ? retype(substituted) : substituted;
    },
  });
  return problems;
}

/** Parses YAML text named `name` in messages. */
export function parseYamlSource(text: string, name: string, options: YamlReadOptions): YamlSource {
  const { code } = options;
  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) {
    failWith(
      code,
      name,
      doc.errors.map((error) => {
        const position = error.linePos?.[0];
        const firstLine = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
        return { where: position ? `${name}:${position.line}:${position.col}` : name, message: `YAML syntax error: ${firstLine}` };
      }),
    );
  }
  if (doc.contents === null) failWith(code, name, [{ where: name, message: `the file is empty (expected ${options.expected ?? "a YAML mapping"})` }]);
  if (options.env) {
    const problems = interpolateDocument(doc, name, lineCounter, options.env);
    if (problems.length > 0) failWith(code, name, problems);
  }
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (error) {
    // e.g. "Excessive alias count indicates a resource exhaustion attack" (a billion-laughs file).
    failWith(code, name, [{ where: name, message: `cannot read the YAML: ${errorMessage(error).split("\n")[0]}` }]);
  }

  const where = (path: readonly PropertyKey[]): string => {
    const keys = path.map((part) => (typeof part === "symbol" ? String(part) : part));
    // The value itself when it is there; a missing one points at the nearest parent that is.
    for (let depth = keys.length; depth >= 0; depth--) {
      const node = depth === 0 ? doc.contents : doc.getIn(keys.slice(0, depth), true);
      if (isNode(node) && node.range) return locate(name, lineCounter, node.range[0]);
    }
    return name;
  };
  const fail = (problems: ReadonlyArray<{ where: string; message: string }>): never => failWith(code, name, problems);
  return {
    name,
    data,
    where,
    fail,
    validate<T>(schema: z.ZodType<T>, input: unknown = data): T {
      const result = schema.safeParse(input);
      if (result.success) return result.data;
      return fail(
        result.error.issues.map((issue) => {
          // An unexpected key has the mapping as its path; its own position is more useful.
          const at = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
          return { where: where(at), message: fieldProblemText(formatZodIssue(issue, input)) };
        }),
      );
    },
  };
}

/** Reads and parses a YAML file; an unreadable file is an error naming it. */
export function readYamlSource(file: string, options: YamlReadOptions & { what?: string }): YamlSource {
  let text: string;
  try {
    const { size } = fs.statSync(file);
    if (size > MAX_YAML_BYTES)
      throw new IwrError(
        options.code,
        `${file}: the ${options.what ?? "file"} is ${(size / 1024 / 1024).toFixed(1)} MiB; at most ${MAX_YAML_BYTES / 1024 / 1024} MiB is read`,
        { file, bytes: size },
      );
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof IwrError) throw error;
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : ((error as NodeJS.ErrnoException).code ?? errorMessage(error));
    throw new IwrError(options.code, `${file}: cannot read the ${options.what ?? "file"}: ${reason}`, { file }, { cause: error });
  }
  return parseYamlSource(text, file, options);
}
