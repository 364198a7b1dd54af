/**
 * The command-line contract of every `npm run` script and scripts/*.ts, bench/*.ts entry
 * point (issue #15 §5), kept in one place so the scripts behave like the `iwr` commands:
 *
 *   --help, -h     prints the usage line, what the script does and each option, and exits 0
 *                  before the script reads, writes or launches anything;
 *   a bad call     (an unknown option, a missing or malformed value, an argument the script
 *                  does not take) prints the problem and the usage line and exits 2, the
 *                  code `iwr` uses for usage errors (src/cli/exit-codes.ts), with no stack trace.
 *
 * Parsing is node:util parseArgs in strict mode; a value parser (`parse`) turns an
 * option's text into what the script uses, and a parser that throws is a usage error
 * naming the option. Defaults go through the same parser, so a script sees one type.
 *
 * Not an entry point: this file has no --help of its own.
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { positiveInteger } from "../src/cli/options.ts";

export interface StringOption<T = unknown> {
  type: "string";
  /** How the value is shown in the usage line: "<dir>", "1,2". */
  value: string;
  description: string;
  /** The text used when the option is not given (shown in --help, parsed like a given value). */
  default?: string;
  /** Text → value; throw to refuse the value (the message is shown after the option's name). */
  parse?: (text: string) => T;
}

export interface BooleanOption {
  type: "boolean";
  description: string;
}

export type ScriptOption = StringOption | BooleanOption;

export interface ScriptSpec<Options extends Record<string, ScriptOption>> {
  /** The name errors start with, as the script's own messages do: "calibrate", "bench:media". */
  name: string;
  /** How the script is started, up to its arguments: "npm run calibrate --". */
  command: string;
  /** What it does, in a sentence or two. */
  summary: string;
  options: Options;
  /** Positional arguments, for a script that takes any. */
  positionals?: { usage: string; description: string };
}

type ValueOf<Option> = Option extends BooleanOption
  ? boolean
  : Option extends { parse: (text: string) => infer T }
    ? Option extends { default: string }
      ? T
      : T | undefined
    : Option extends { default: string }
      ? string
      : string | undefined;

export type ScriptValues<Options extends Record<string, ScriptOption>> = { -readonly [Name in keyof Options]: ValueOf<Options[Name]> };

export interface ParsedScriptArgs<Options extends Record<string, ScriptOption>> {
  values: ScriptValues<Options>;
  positionals: string[];
}

const SUMMARY_WIDTH = 100;

function wrapped(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

const HELP_OPTION = { flags: "-h, --help", description: "print this help and exit" };

function optionFlags(name: string, option: ScriptOption): string {
  return option.type === "string" ? `--${name} ${option.value}` : `--${name}`;
}

export function usageLine(spec: ScriptSpec<Record<string, ScriptOption>>): string {
  const parts = Object.entries(spec.options).map(([name, option]) => `[${optionFlags(name, option)}]`);
  if (spec.positionals) parts.push(spec.positionals.usage);
  // "npm run x --" passes what follows to the script; with nothing to pass it reads as a typo.
  const command = parts.length === 0 ? spec.command.replace(/\s+--$/, "") : spec.command;
  return `usage: ${[command, ...parts].join(" ")}`;
}

export function helpText(spec: ScriptSpec<Record<string, ScriptOption>>): string {
  const argumentRows = spec.positionals ? [{ flags: spec.positionals.usage, description: spec.positionals.description }] : [];
  const optionRows = [
    ...Object.entries(spec.options).map(([name, option]) => ({
      flags: optionFlags(name, option),
      description: option.type === "string" && option.default !== undefined ? `${option.description} (default ${option.default})` : option.description,
    })),
    HELP_OPTION,
  ];
  const width = Math.max(...[...argumentRows, ...optionRows].map((row) => row.flags.length));
  const section = (title: string, rows: readonly { flags: string; description: string }[]) =>
    rows.length === 0 ? [] : ["", `${title}:`, ...rows.map((row) => `  ${row.flags.padEnd(width)}  ${row.description}`)];
  return [usageLine(spec), "", ...wrapped(spec.summary, SUMMARY_WIDTH), ...section("arguments", argumentRows), ...section("options", optionRows)].join("\n");
}

/** Prints `message` and the usage line, and ends the process with 2 (a usage error: nothing was done). */
export function exitWithUsageError(spec: ScriptSpec<Record<string, ScriptOption>>, message: string): never {
  console.error(`${spec.name}: ${message}\n${usageLine(spec)}\n(--help lists the options)`);
  process.exit(2);
}

/** parseArgs' messages go on to advise about "--"; the first sentence is the problem. */
function firstSentence(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split(/\.\s/)[0] ?? message;
}

/**
 * The script's options from `argv` (default: the process's arguments). Does not return
 * for --help (exit 0) or a bad call (exit 2).
 */
export function parseScriptArgs<Options extends Record<string, ScriptOption>>(
  spec: ScriptSpec<Options>,
  argv: readonly string[] = process.argv.slice(2),
): ParsedScriptArgs<Options> {
  const parseArgsOptions: Record<string, { type: "string" | "boolean"; short?: string }> = { help: { type: "boolean", short: "h" } };
  for (const [name, option] of Object.entries(spec.options)) parseArgsOptions[name] = { type: option.type };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: parseArgsOptions, strict: true, allowPositionals: spec.positionals !== undefined });
  } catch (error) {
    exitWithUsageError(spec, firstSentence(error));
  }
  if (parsed.values.help) {
    console.log(helpText(spec));
    process.exit(0);
  }
  const values: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(spec.options)) {
    const given = parsed.values[name];
    if (option.type === "boolean") {
      values[name] = given === true;
      continue;
    }
    const text = typeof given === "string" ? given : option.default;
    if (text === undefined || !option.parse) {
      values[name] = text;
      continue;
    }
    try {
      values[name] = option.parse(text);
    } catch (error) {
      exitWithUsageError(spec, `--${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { values: values as ScriptValues<Options>, positionals: parsed.positionals };
}

/** A value parser accepting one of `choices`. */
export function oneOf<const Choice extends string>(choices: readonly Choice[]): (text: string) => Choice {
  return (text) => {
    const choice = choices.find((candidate) => candidate === text);
    if (choice === undefined) throw new Error(`expected ${choices.join(" or ")}, got '${text}'`);
    return choice;
  };
}

/** "1,2,4" → [1, 2, 4], each a positive integer. */
export function positiveIntegerList(text: string): number[] {
  const parts = text.split(",").map((part) => part.trim());
  if (parts.some((part) => part === "")) throw new Error(`expected positive integers like 1,2,4, got '${text}'`);
  return parts.map((part) => positiveInteger(part));
}

/** 0, 1, 2, ... (a count of milliseconds, say). */
export function nonNegativeInteger(text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new Error(`expected a non-negative integer, got '${text}'`);
  return Number(text);
}

/** A task file that is there: refused up front rather than failing after start-up. */
export function existingTaskFile(text: string): string {
  if (!fs.existsSync(text)) throw new Error(`${text} does not exist (record the bundled suite with npm run tasks:build, or pass --data)`);
  return text;
}
