/**
 * A JSON object out of a model's reply: the first ```json block, else the outermost
 * braces, validated by a zod schema. Garbage is an IwrError("MODEL_REPLY") naming what
 * was wrong, never a half-filled object in state.
 */
import type { z } from "zod";
import { fieldProblemText, formatZodIssues } from "../../src/config/zod-issues.ts";
import { IwrError } from "../../src/errors.ts";

const JSON_FENCE = /```[ \t]*json\b[^\n]*\n([\s\S]*?)(?:```|$)/i;

/** For a model call's `accept`: why `reply` is not such a JSON object, or undefined when it is. */
export function jsonReplyProblem(reply: string, schema: z.ZodType, what: string): string | undefined {
  try {
    parseJsonReply(reply, schema, what);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export function parseJsonReply<Schema extends z.ZodType>(reply: string, schema: Schema, what: string): z.infer<Schema> {
  const fenced = JSON_FENCE.exec(reply)?.[1];
  const start = reply.indexOf("{");
  const end = reply.lastIndexOf("}");
  const candidate = fenced ?? (start >= 0 && end > start ? reply.slice(start, end + 1) : undefined);
  if (candidate === undefined)
    throw new IwrError("MODEL_REPLY", `${what}: the reply holds no JSON object (${reply.length} characters)`, { replyChars: reply.length });
  let parsed: unknown;
  try {
    parsed = JSON.parse(candidate);
  } catch (error) {
    throw new IwrError("MODEL_REPLY", `${what}: the reply's JSON does not parse: ${error instanceof Error ? error.message : String(error)}`, {
      replyChars: reply.length,
    });
  }
  const checked = schema.safeParse(parsed);
  if (!checked.success)
    throw new IwrError(
      "MODEL_REPLY",
      `${what}: the reply's JSON is not the expected shape: ${formatZodIssues(checked.error, parsed).slice(0, 5).map(fieldProblemText).join("; ")}`,
      { replyChars: reply.length },
    );
  return checked.data;
}
