/**
 * Reading the judge's reply: the benchmark's `{"think": ..., "result": "Yes"|"No"}`,
 * then the same JSON inside a fenced block or surrounded by prose, then the bare words
 * Yes / No. Anything else is unparsable (and retried by the caller).
 */
import { pythonJsonLoads, pythonSliceDropLast, pythonStrip } from "../python-rules.ts";

export interface ParsedJudgeReply {
  result: "Yes" | "No";
  think?: string;
  /** Which fallback read it. */
  via: "json" | "fenced-json" | "embedded-json" | "words";
}

function fromObject(value: unknown): Omit<ParsedJudgeReply, "via"> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const raw = record.result ?? record.Result ?? record.answer;
  // Only the bare word counts ("No." and "Yes!" do): "none of the above" or "not sure" is no verdict.
  const word =
    typeof raw === "string"
      ? raw
          .trim()
          .toLowerCase()
          .replace(/^[^a-z]+|[^a-z]+$/g, "")
      : typeof raw === "boolean"
        ? String(raw)
        : "";
  const result = word === "yes" || word === "true" ? "Yes" : word === "no" || word === "false" ? "No" : undefined;
  if (!result) return undefined;
  const think = record.think ?? record.thinking ?? record.reasoning;
  return typeof think === "string" ? { result, think } : { result };
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function parseJudgeReply(reply: string): ParsedJudgeReply | undefined {
  const text = reply.trim();
  if (!text) return undefined;
  const whole = fromObject(tryJson(text));
  if (whole) return { ...whole, via: "json" };
  for (const match of text.matchAll(/```(?:json|JSON)?\s*\n?([\s\S]*?)```/g)) {
    const fenced = fromObject(tryJson(match[1]?.trim() ?? ""));
    if (fenced) return { ...fenced, via: "fenced-json" };
  }
  for (const match of text.matchAll(/\{[^{}]*\}/g)) {
    const embedded = fromObject(tryJson(match[0]));
    if (embedded) return { ...embedded, via: "embedded-json" };
  }
  const keyed = /["']?result["']?\s*[:=]\s*["']?(yes|no)\b/i.exec(text);
  if (keyed?.[1]) return { result: keyed[1].toLowerCase() === "yes" ? "Yes" : "No", via: "words" };
  const hasYes = /\byes\b/i.test(text);
  const hasNo = /\bno\b/i.test(text);
  if (hasYes !== hasNo) return { result: hasYes ? "Yes" : "No", via: "words" };
  return undefined;
}

/**
 * The harness's parse (assertion_scorer.py), for the official profile, to the byte: the
 * reply stripped as Python strips it; the text of the first ```json block (else of the
 * first ``` block, else the whole reply) read by Python's `json.loads`; from a JSON object,
 * its `result` when it is exactly "Yes" or "No" (anything else is no verdict, the
 * harness's "Error"). When that text is not JSON, or is JSON but not an object (a string,
 * a list, a number: the harness's `.get` fails inside the same try), the substring "Yes"
 * anywhere in the reply wins, then "No" — case-sensitive, so "Not visible" reads as No and
 * "Yesterday" as Yes, as in the harness. python-rules.ts says where Python's rules differ
 * from JavaScript's (strip vs trim, NaN and Infinity, slicing by character).
 */
export function parseJudgeReplyAsHarness(reply: string): ParsedJudgeReply | undefined {
  const text = pythonStrip(reply);
  const fence = text.includes("```json") ? "```json" : text.includes("```") ? "```" : undefined;
  let jsonText = text;
  if (fence) {
    const start = text.indexOf(fence) + fence.length;
    const end = text.indexOf("```", start);
    // Without a closing fence the harness slices to -1: the reply's last character is dropped.
    jsonText = pythonStrip(end < 0 ? pythonSliceDropLast(text, start) : text.slice(start, end));
  }
  const parsed = pythonJsonLoads(jsonText);
  const record = parsed.ok && typeof parsed.value === "object" && parsed.value !== null && !Array.isArray(parsed.value) ? parsed.value : undefined;
  if (record) {
    const result = Object.hasOwn(record, "result") ? (record as Record<string, unknown>).result : undefined;
    if (result !== "Yes" && result !== "No") return undefined;
    const think = (record as Record<string, unknown>).think;
    return { result, ...(typeof think === "string" ? { think } : {}), via: fence ? "fenced-json" : "json" };
  }
  if (text.includes("Yes")) return { result: "Yes", via: "words" };
  if (text.includes("No")) return { result: "No", via: "words" };
  return undefined;
}
