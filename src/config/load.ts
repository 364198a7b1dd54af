/**
 * YAML configuration files, validated by a zod schema, with `${VAR}` and
 * `${VAR:-default}` read from the environment in string values (yaml-source.ts reads
 * the file and keeps positions; this is its form for configs).
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
import type { z } from "zod";
import { parseYamlSource, readYamlSource } from "./yaml-source.ts";

export interface ConfigLoadOptions {
  /** Where `${VAR}` values come from; process.env by default. */
  env?: NodeJS.ProcessEnv;
}

/** Parses YAML text (named `sourceName` in messages), interpolates and validates it. */
export function parseYamlConfig<T>(text: string, schema: z.ZodType<T>, sourceName: string, options: ConfigLoadOptions = {}): T {
  return parseYamlSource(text, sourceName, { code: "CONFIG_INVALID", env: options.env ?? process.env }).validate(schema);
}

/** Reads a YAML config file; see the module comment for interpolation rules. */
export function loadYamlConfig<T>(file: string, schema: z.ZodType<T>, options: ConfigLoadOptions = {}): T {
  return readYamlSource(file, { code: "CONFIG_INVALID", env: options.env ?? process.env, what: "config" }).validate(schema);
}
