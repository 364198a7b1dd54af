/**
 * Reading a record or a cache entry that an earlier run wrote, and that a crash, a full
 * disk, a copy or a hand edit may have damaged since. Every such read is verified (it
 * parses, it has the record's shape) and says which of three things it found: the record,
 * no record, or a damaged one with the reason. A damaged file is never read as a default
 * (a zero score, an empty list) and never silently skipped: its reader either recomputes
 * it, after moving the bad file aside as `<name>.corrupt` so that the evidence is kept and
 * the next read does not trip on it again, or reports the reason where the value was wanted.
 */
import fs from "node:fs";
import type { z } from "zod";
import { errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";

export type VerifiedRead<T> = { status: "ok"; value: T } | { status: "missing" } | { status: "corrupt"; reason: string };

/** The first zod issue as "field: message" (a record's shape problem, for a warning). */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  return issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}

/** Parses `text` as JSON and checks it against `schema`. */
export function verifyJson<Schema extends z.ZodType>(text: string, schema: Schema): VerifiedRead<z.infer<Schema>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const empty = text.trim() === "";
    return { status: "corrupt", reason: empty ? "the file is empty" : `not valid JSON (${errorMessage(error)}; ${text.length} characters)` };
  }
  const checked = schema.safeParse(parsed);
  return checked.success ? { status: "ok", value: checked.data } : { status: "corrupt", reason: `not the expected record: ${firstIssue(checked.error)}` };
}

/** Reads and verifies a JSON record; a file that cannot be read (other than missing) is corrupt too, with the system's reason. */
export function readVerifiedJson<Schema extends z.ZodType>(file: string, schema: Schema): VerifiedRead<z.infer<Schema>> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { status: "missing" };
    return { status: "corrupt", reason: `cannot be read (${code ?? errorMessage(error)})` };
  }
  return verifyJson(text, schema);
}

/** Where `file` goes when it is moved aside: `<file>.corrupt`, or `<file>.corrupt-<n>` when that is taken. */
function asidePath(file: string): string {
  let candidate = `${file}.corrupt`;
  for (let n = 2; fs.existsSync(candidate); n++) candidate = `${file}.corrupt-${n}`;
  return candidate;
}

/**
 * Moves a damaged file aside (`<file>.corrupt`) with a warning naming it and saying what
 * happens next (`then`: "recomputing it", "the cell runs again"). Returns where it went,
 * or undefined when it could not be moved (gone meanwhile, a read-only folder: said too).
 */
export function moveAside(file: string, reason: string, then: string): string | undefined {
  const target = asidePath(file);
  try {
    fs.renameSync(file, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    log("files").warn(`${file} is damaged (${reason}) and could not be moved aside (${code ?? errorMessage(error)}); ${then}`);
    return undefined;
  }
  log("files").warn(`${file} is damaged (${reason}): moved aside to ${target}; ${then}`);
  return target;
}
