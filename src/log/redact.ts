/**
 * Secret redaction shared by the logger, the response cache, results and reports.
 * API keys must never reach a file: anything that looks like a bearer token or an
 * OpenAI-style key is masked, and so is every value under a secret-looking key.
 */
const SECRET_KEY_PATTERN = /(api[-_]?key|authorization|token|secret|password|cookie)/i;
const SECRET_VALUE_PATTERNS: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{8,}/g, // OpenAI-style keys (sk-..., sk-proj-...)
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
];
/** Values registered at run time (e.g. the key read from OPENAI_API_KEY). */
const knownSecrets = new Set<string>();

export const REDACTED = "[REDACTED]";

export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) knownSecrets.add(value);
}

export function redactString(text: string): string {
  let out = text;
  for (const secret of knownSecrets) out = out.split(secret).join(REDACTED);
  for (const pattern of SECRET_VALUE_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}

/** Deep copy with secrets masked; cycles are cut rather than followed. */
export function redact<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === "string") return redactString(value) as T;
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return "[Circular]" as T;
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, seen)) as T;
  if (value instanceof Error) {
    return { name: value.name, message: redactString(value.message), stack: value.stack && redactString(value.stack) } as T;
  }
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = SECRET_KEY_PATTERN.test(key) && inner ? REDACTED : redact(inner, seen);
  }
  return out as T;
}
