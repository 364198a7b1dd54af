/**
 * Typed, actionable errors. Every failure the tool reports to a user carries a
 * stable `code` (for results files and tests) and a message that says where and
 * what: "tasks/x.jsonl:7: action_sequence[2].type: expected ..., got 'Tap'".
 */
import { z } from "zod";

export type IwrErrorCode =
  | "TASK_INVALID"
  | "TASK_MEDIA"
  | "CONFIG_INVALID"
  | "SETUP_MISSING"
  | "BROWSER"
  | "PAGE_TIMEOUT"
  | "PAGE_CRASHED"
  | "PAGE_HOSTILE"
  | "PAGE_MEMORY"
  | "MEDIA"
  | "MODEL"
  | "MODEL_REPLY"
  | "CACHE_MISS"
  | "PROMPT"
  | "RECORDER"
  | "EVALUATOR"
  | "CANDIDATE_MISSING"
  | "IO"
  | "QUEUE"
  | "FOLDER_LOCKED";

export class IwrError extends Error {
  readonly code: IwrErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: IwrErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "IwrError";
    this.code = code;
    this.details = details;
  }
}

/**
 * A plain record of an error, safe to write into a result file: the one failure record
 * every result (eval.json, cell.json, a graph's state) carries.
 */
export const ErrorRecordSchema = z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });
export type ErrorRecord = z.infer<typeof ErrorRecordSchema>;

export function toErrorRecord(error: unknown): ErrorRecord {
  if (error instanceof IwrError) {
    return Object.keys(error.details).length > 0
      ? { code: error.code, message: error.message, details: error.details }
      : { code: error.code, message: error.message };
  }
  if (error instanceof Error) return { code: error.name || "Error", message: error.message };
  return { code: "Error", message: String(error) };
}

/** At most this much of a value a user gave is quoted back in a message. */
export const QUOTED_CHARS = 200;

/** A value quoted for a message: 'value', or its first QUOTED_CHARS characters and its length. */
export function quoted(value: string, max = QUOTED_CHARS): string {
  return value.length > max ? `'${value.slice(0, max)}…' (${value.length} characters)` : `'${value}'`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
