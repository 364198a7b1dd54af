/**
 * Our own retry loop for model calls. ChatOpenAI is built with `maxRetries: 0`
 * (its default of 6, on top of ours, would multiply waits), and this loop decides:
 *
 * - 429, 408, 409 and 5xx, failures to connect, and connections dropped on the way
 *   (reset, closed mid-reply: undici's "terminated"): retried, waiting what the
 *   server's `retry-after-ms` / `retry-after` (seconds or an HTTP date) asks, else
 *   exponential backoff with jitter; every wait capped at `retryMaxDelayMs`.
 * - A timeout is not retried: the limit is long (minutes) and a model that ran out
 *   of time once at temperature 0 will most likely do it again. That includes the call's
 *   own deadline and idle-body limit (client.ts) and the HTTP client's header and body
 *   timeouts (undici's UND_ERR_HEADERS_TIMEOUT, UND_ERR_BODY_TIMEOUT).
 * - Anything else (400, 401, 403, 404, 422, a reply that is not Chat Completions
 *   JSON) fails at once.
 */
import { errorMessage } from "../errors.ts";
import { redactString } from "../log/redact.ts";

export interface RetryPolicy {
  maxRetries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
}

export type FailureKind = "http" | "timeout" | "connection" | "aborted" | "reply";

export interface FailureInfo {
  kind: FailureKind;
  retryable: boolean;
  status?: number;
  /** What the server asked us to wait, when it said. */
  retryAfterMs?: number;
  /** One line, secrets masked, for messages. */
  detail: string;
}

const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** `retry-after` is either seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

function headerOf(error: object, name: string): string | null {
  const headers = "headers" in error ? error.headers : undefined;
  if (headers && typeof headers === "object" && "get" in headers && typeof headers.get === "function") {
    const value: unknown = headers.get(name);
    return typeof value === "string" ? value : null;
  }
  return null;
}

/** First line of an error's message, with LangChain's troubleshooting footer and secrets removed. */
function firstLine(error: unknown): string {
  return redactString(errorMessage(error).split("\n")[0] ?? "").trim();
}

/** Socket-level error codes (Node and undici) that mean the connection broke, not that the request was wrong. */
const TRANSPORT_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_ABORTED",
  "UND_ERR_CONNECT_TIMEOUT",
]);
/** The HTTP client's own waits for a reply's headers or its next byte: the reply did not come in time, which is a timeout. */
const HTTP_TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
/** What fetch (undici) says when a connection drops while the body is read, or cannot be made. */
const TRANSPORT_MESSAGES = /^(terminated|fetch failed|other side closed|socket hang up|premature close)$/i;

/** Whether the error, or one of its causes, carries one of these codes. */
function hasCode(error: unknown, codes: ReadonlySet<string>): boolean {
  for (let current: unknown = error, depth = 0; current !== null && typeof current === "object" && depth < 6; depth++) {
    const code = "code" in current ? (current as { code?: unknown }).code : undefined;
    if (typeof code === "string" && codes.has(code)) return true;
    current = "cause" in current ? (current as { cause?: unknown }).cause : undefined;
  }
  return false;
}

/** Whether the error, or one of its causes, is a broken connection (the reply never arrived whole). */
export function isTransportFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current !== null && typeof current === "object" && depth < 6; depth++) {
    const code = "code" in current ? (current as { code?: unknown }).code : undefined;
    if (typeof code === "string" && TRANSPORT_CODES.has(code)) return true;
    if (current instanceof Error && TRANSPORT_MESSAGES.test(current.message.trim())) return true;
    current = "cause" in current ? (current as { cause?: unknown }).cause : undefined;
  }
  return false;
}

/** Reads an error thrown by ChatOpenAI / the openai SDK (duck-typed: the SDK is not our direct dependency). */
export function classifyFailure(error: unknown): FailureInfo {
  const detail = firstLine(error);
  if (error === null || typeof error !== "object") return { kind: "reply", retryable: false, detail };
  const name = error instanceof Error ? error.name : "";
  const constructorName = error.constructor?.name ?? "";
  // The call's own limits (client.ts): its deadline and idle-body limit are timeouts, its size limit a refused reply.
  if (name === "CallLimitError") return { kind: "timeout", retryable: false, detail };
  if (name === "AbortError" || constructorName === "APIUserAbortError") return { kind: "aborted", retryable: false, detail };
  if (name === "TimeoutError" || constructorName === "APIConnectionTimeoutError" || hasCode(error, HTTP_TIMEOUT_CODES))
    return { kind: "timeout", retryable: false, detail };
  const status = "status" in error && typeof error.status === "number" ? error.status : undefined;
  if (status !== undefined) {
    // OpenAI sends `retry-after-ms` (milliseconds) next to the standard `retry-after`.
    const exactMs = headerOf(error, "retry-after-ms")?.trim();
    const retryAfterMs = exactMs && /^\d+(\.\d+)?$/.test(exactMs) ? Number(exactMs) : parseRetryAfter(headerOf(error, "retry-after"));
    const retryable = RETRYABLE_STATUS.has(status) || status >= 500;
    return retryAfterMs === undefined ? { kind: "http", retryable, status, detail } : { kind: "http", retryable, status, retryAfterMs, detail };
  }
  if (constructorName === "APIConnectionError" || isTransportFailure(error)) return { kind: "connection", retryable: true, detail };
  // SyntaxError (body not JSON), TypeError (JSON without choices) and the like: the endpoint is not speaking the protocol.
  return { kind: "reply", retryable: false, detail };
}

/** The wait before retry number `retry` (0-based): the server's ask, or 2^retry × base with ±25 % jitter; capped. */
export function retryDelayMs(retry: number, policy: RetryPolicy, failure: FailureInfo, random: () => number = Math.random): number {
  const asked = failure.retryAfterMs;
  const backoff = policy.retryBaseDelayMs * 2 ** retry * (0.75 + 0.5 * random());
  return Math.round(Math.min(asked ?? backoff, policy.retryMaxDelayMs));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export interface AttemptFailure {
  failure: FailureInfo;
  /** 1-based attempt that failed. */
  attempt: number;
  cause: unknown;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or retries run out;
 * then throws what `fail` builds from the last failure.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  hooks: { signal?: AbortSignal; onRetry?: (failure: FailureInfo, attempt: number, delayMs: number) => void; fail: (last: AttemptFailure) => Error },
): Promise<T> {
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt();
    } catch (error) {
      const failure = classifyFailure(error);
      if (!failure.retryable || attemptNumber > policy.maxRetries) throw hooks.fail({ failure, attempt: attemptNumber, cause: error });
      const delayMs = retryDelayMs(attemptNumber - 1, policy, failure);
      hooks.onRetry?.(failure, attemptNumber, delayMs);
      try {
        await sleep(delayMs, hooks.signal);
      } catch (abortReason) {
        throw hooks.fail({
          failure: { kind: "aborted", retryable: false, detail: "cancelled while waiting to retry" },
          attempt: attemptNumber,
          cause: abortReason,
        });
      }
    }
  }
}
