/**
 * YAML configuration files, validated by a zod schema, with `${VAR}` and
 * `${VAR:-default}` read from the environment in string values.
 *
 * Every problem in a file is reported at once (one IwrError("CONFIG_INVALID") with a
 * line each), each one saying where: "configs/x.yaml:4:15: model.temperature:
 * expected number, got 'hot'".
 *
 * Interpolation rules (shell-like, on purpose, so they read as people expect):
 * - `${NAME}` is the variable's value; unset is an error naming the variable.
 * - `${NAME:-default}` falls back to `default` when NAME is unset or empty.
 * - `$${` is a literal `${`.
 * - A value that is an unquoted scalar made of one `${...}` alone is re-read as YAML,
 *   so `port: ${PORT:-8080}` is a number and `headless: ${HEADLESS:-true}` a boolean;
 *   quote it to keep a string.
 * Keys are never interpolated: a config's shape does not depend on the environment.
 */
import fs from "node:fs";
import YAML, { LineCounter, isPair, isScalar, isSeq, type Node, type Scalar } from "yaml";
import type { z } from "zod";
import { IwrError, errorMessage } from "../errors.ts";
import { fieldProblemText, formatFieldPath, formatZodIssue } from "./zod-issues.ts";

export interface ConfigLoadOptions {
  /** Where `${VAR}` values come from; process.env by default. */
  env?: NodeJS.ProcessEnv;
}

type KeyPath = (string | number)[];

const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const REFERENCE_BODY = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;
const SOLE_REFERENCE = /^\$\{[^}]*\}$/;

interface Located {
  where: string;
  message: string;
}

function locate(sourceName: string, lineCounter: LineCounter, offset: number | undefined): string {
  if (offset === undefined) return sourceName;
  const { line, col } = lineCounter.linePos(offset);
  return `${sourceName}:${line}:${col}`;
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

/** Substitutes references in one string; problems go into `problems`. */
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

function interpolateDocument(doc: YAML.Document, sourceName: string, lineCounter: LineCounter, env: NodeJS.ProcessEnv): Located[] {
  const problems: Located[] = [];
  YAML.visit(doc, {
    Scalar(key, node: Scalar, ancestors) {
      if (key === "key" || typeof node.value !== "string" || !node.value.includes("${")) return;
      const original = node.value;
      const keyPath = formatFieldPath(keyPathOf(ancestors, node));
      const where = locate(sourceName, lineCounter, node.range?.[0]);
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

/** The closest node to a (possibly missing) key path, for a line number. */
function nodeNear(doc: YAML.Document, path: readonly PropertyKey[]): Node | undefined {
  for (let length = path.length; length >= 0; length--) {
    const found: unknown = length === 0 ? doc.contents : doc.getIn(path.slice(0, length), true);
    if (found && typeof found === "object" && "range" in found) return found as Node;
  }
  return undefined;
}

function fail(sourceName: string, problems: Located[]): never {
  const lines = problems.map((problem) => `${problem.where}: ${problem.message}`);
  const header = problems.length === 1 ? "" : `${sourceName}: ${problems.length} problems\n`;
  throw new IwrError("CONFIG_INVALID", `${header}${lines.join("\n")}`, { file: sourceName, problems: lines });
}

/** Parses YAML text (named `sourceName` in messages), interpolates and validates it. */
export function parseYamlConfig<T>(text: string, schema: z.ZodType<T>, sourceName: string, options: ConfigLoadOptions = {}): T {
  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) {
    fail(
      sourceName,
      doc.errors.map((error) => {
        const position = error.linePos?.[0];
        const firstLine = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
        return { where: position ? `${sourceName}:${position.line}:${position.col}` : sourceName, message: `YAML syntax error: ${firstLine}` };
      }),
    );
  }
  if (doc.contents === null) fail(sourceName, [{ where: sourceName, message: "the file is empty (expected a YAML mapping)" }]);

  const interpolationProblems = interpolateDocument(doc, sourceName, lineCounter, options.env ?? process.env);
  if (interpolationProblems.length > 0) fail(sourceName, interpolationProblems);

  const data: unknown = doc.toJS();
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  fail(
    sourceName,
    result.error.issues.map((issue) => ({
      where: locate(sourceName, lineCounter, nodeNear(doc, issue.path)?.range?.[0]),
      message: fieldProblemText(formatZodIssue(issue, data)),
    })),
  );
}

/** Reads a YAML config file; see the module comment for interpolation rules. */
export function loadYamlConfig<T>(file: string, schema: z.ZodType<T>, options: ConfigLoadOptions = {}): T {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : errorMessage(error);
    throw new IwrError("CONFIG_INVALID", `${file}: cannot read the config: ${reason}`, { file }, { cause: error });
  }
  return parseYamlConfig(text, schema, file, options);
}
