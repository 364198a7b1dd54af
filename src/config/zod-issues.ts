/**
 * Turns zod issues into the project's error sentences: a dotted field path
 * (`action_sequence[2].type`) and "expected X, got Y". Shared by the task validator
 * and the YAML config loader, so both speak the same way; it lives in config/
 * because tasks/ may import config/ but not the other way round.
 *
 * zod's own default messages ("Invalid option: expected one of ...") say what was
 * expected but never what was found, so for every built-in issue kind we write our
 * own sentence and append the offending value, looked up in the input by path.
 * A message a schema author wrote on purpose is kept as it is.
 */
import type { z } from "zod";

export interface FieldProblem {
  /** Dotted path with [index] for arrays; "" for the value itself. */
  path: string;
  message: string;
}

type PathSegment = PropertyKey;

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

export function formatFieldPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else {
      const key = String(segment);
      if (IDENTIFIER.test(key)) out += out === "" ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** The value at `segments` inside `input`, or undefined when any step is missing. */
export function valueAtPath(input: unknown, segments: readonly PathSegment[]): unknown {
  let current: unknown = input;
  for (const segment of segments) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

const MAX_SHOWN_CHARS = 60;

/** A short, quoted description of a found value, for "got ...". */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing (the field is missing)";
  if (value === null) return "null";
  if (typeof value === "string") {
    const oneLine = value.replace(/\r?\n/g, "\\n");
    const shown = oneLine.length > MAX_SHOWN_CHARS ? `${oneLine.slice(0, MAX_SHOWN_CHARS)}...` : oneLine;
    return `'${shown}'`;
  }
  if (Array.isArray(value)) {
    return value.length === 0 ? "an empty list" : `a list of ${value.length} item${value.length === 1 ? "" : "s"}`;
  }
  if (typeof value === "object") return "an object";
  return String(value);
}

function typeName(expected: string): string {
  return expected === "array" ? "a list" : expected === "object" ? "an object" : expected;
}

/** zod's built-in English messages start like this; anything else was written by a schema author. */
const ZOD_DEFAULT_MESSAGE = /^(Too (small|big)|Invalid|Unrecognized)/;

function sizeText(issue: { origin?: string; inclusive?: boolean }, bound: number | bigint, direction: "min" | "max"): string {
  const word = direction === "min" ? "at least" : "at most";
  const strictWord = direction === "min" ? "more than" : "less than";
  const amount = issue.inclusive === false ? `${strictWord} ${bound}` : `${word} ${bound}`;
  if (issue.origin === "array" || issue.origin === "set") return `expected ${amount} item(s)`;
  if (issue.origin === "string") return `expected ${amount} character(s)`;
  return `expected a value ${amount}`;
}

/** The "expected ..." half of the sentence for one issue (without the found value). */
function expectation(issue: z.core.$ZodIssue): string {
  const custom = !ZOD_DEFAULT_MESSAGE.test(issue.message);
  switch (issue.code) {
    case "invalid_type":
      return `expected ${typeName(issue.expected)}`;
    case "invalid_value": {
      const shown = issue.values.map((value) => (typeof value === "string" ? value : String(value)));
      return shown.length === 1 ? `expected ${describeValue(issue.values[0])}` : `expected one of ${shown.join("|")}`;
    }
    case "unrecognized_keys":
      return `unexpected key${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((key) => `'${key}'`).join(", ")}`;
    case "too_small":
      return custom ? issue.message : sizeText(issue, issue.minimum, "min");
    case "too_big":
      return custom ? issue.message : sizeText(issue, issue.maximum, "max");
    case "invalid_format":
      if (custom) return issue.message;
      return issue.format === "regex" && issue.pattern ? `expected text matching ${issue.pattern}` : `expected a valid ${issue.format}`;
    case "invalid_union": {
      if (custom) return issue.message;
      // A discriminated union names its allowed discriminator values.
      const options = (issue as { options?: unknown }).options;
      if (Array.isArray(options) && options.length > 0) return `expected one of ${options.map(String).join("|")}`;
      return "expected a value matching one of the allowed forms";
    }
    default:
      return issue.message;
  }
}

/** One issue as { path, message }, the message ending in "got <value>" when a value was there. */
export function formatZodIssue(issue: z.core.$ZodIssue, input: unknown): FieldProblem {
  const path = formatFieldPath(issue.path);
  const found = valueAtPath(input, issue.path);
  const base = expectation(issue);
  // A missing field is news for a type error ("expected string, got nothing");
  // for a custom rule such as "a Type action needs parameters.text" it is noise.
  const showFound = issue.code !== "unrecognized_keys" && (found !== undefined || issue.code === "invalid_type");
  return { path, message: showFound ? `${base}, got ${describeValue(found)}` : base };
}

export function formatZodIssues(error: z.ZodError, input: unknown): FieldProblem[] {
  return error.issues.map((issue) => formatZodIssue(issue, input));
}

/** "path: message", or just the message for the value itself. */
export function fieldProblemText(problem: FieldProblem): string {
  return problem.path ? `${problem.path}: ${problem.message}` : problem.message;
}
