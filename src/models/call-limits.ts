/**
 * The limits of one attempt at a model call, enforced on the wire:
 *
 * - a deadline (the spec's `timeoutMs`) over the whole attempt: connecting, waiting for the
 *   headers and reading the body. The OpenAI SDK's own timer stops at the headers, and a
 *   body that stalls after them was left to the HTTP client's five-minute body timeout;
 * - an idle-body limit: once the headers are in, a reply that sends no byte for so long has
 *   stalled (a non-streamed reply is sent whole once ready), and the call ends at once;
 * - a size limit: a reply larger than the request's max_tokens allows (LIMITS below) is
 *   refused before more of it is read.
 *
 * ChatOpenAI builds its requests deep in the SDK; the attempt's limits reach its fetch
 * through AsyncLocalStorage (the attempt runs inside `withCallLimits`), and a broken limit
 * aborts the attempt's own signal, so the SDK stops reading and the socket is closed.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** Which limit ended an attempt, with what the message needs. */
export type BrokenLimit = { kind: "deadline"; ms: number } | { kind: "idle"; ms: number } | { kind: "size"; bytes: number; maxTokens: number };

/**
 * A reply's bytes per token of max_tokens, with room: a token is about 4 characters of text,
 * JSON escapes (\u003c for '<') make a character at most 6 bytes, and a long token (a run of
 * spaces) more; 48 bytes is several times what any real reply uses. Plus the envelope.
 */
export const REPLY_BYTES_PER_TOKEN = 48;
export const REPLY_ENVELOPE_BYTES = 64 * 1024;

/** The most a reply of `maxTokens` may weigh on the wire (and as text). */
export function maxReplyBytes(maxTokens: number): number {
  return maxTokens * REPLY_BYTES_PER_TOKEN + REPLY_ENVELOPE_BYTES;
}

/** Default idle-body limit: no byte for this long after the headers ends the call (IWR_MODEL_IDLE_MS overrides). */
export const DEFAULT_IDLE_BODY_MS = 30_000;

export function defaultIdleBodyMs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.IWR_MODEL_IDLE_MS);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_IDLE_BODY_MS;
}

interface AttemptLimits {
  idleMs: number;
  maxBytes: number;
  maxTokens: number;
  /** Ends the attempt: records why and aborts its signal. */
  breach(limit: BrokenLimit): void;
}

const currentAttempt = new AsyncLocalStorage<AttemptLimits>();

/** The attempt's outcome when a limit ended it. */
export interface LimitedAttempt {
  /** The signal to hand the SDK: aborted by the caller's signal or by a broken limit. */
  signal: AbortSignal;
  /** Set when a limit (not the caller) ended the attempt. */
  broken(): BrokenLimit | undefined;
}

/**
 * Runs one attempt under its limits: `run` gets the signal to pass on, and every fetch it
 * makes (through `limitedFetch`) is watched. The deadline's timer is cleared when it ends.
 */
export async function withCallLimits<T>(
  limits: { timeoutMs: number; idleMs: number; maxTokens: number },
  callerSignal: AbortSignal | undefined,
  run: (attempt: LimitedAttempt) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let broken: BrokenLimit | undefined;
  const breach = (limit: BrokenLimit) => {
    broken ??= limit;
    controller.abort(new Error(`call limit: ${limit.kind}`));
  };
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
  const timer = setTimeout(() => breach({ kind: "deadline", ms: limits.timeoutMs }), limits.timeoutMs);
  const attempt: AttemptLimits = {
    idleMs: Math.min(limits.idleMs, limits.timeoutMs),
    maxBytes: maxReplyBytes(limits.maxTokens),
    maxTokens: limits.maxTokens,
    breach,
  };
  try {
    return await currentAttempt.run(attempt, () => run({ signal: controller.signal, broken: () => broken }));
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener("abort", onCallerAbort);
  }
}

/** The body of `response` read through the attempt's idle and size limits. */
function watchedBody(body: ReadableStream<Uint8Array>, attempt: AttemptLimits): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let received = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const idle = setTimeout(() => attempt.breach({ kind: "idle", ms: attempt.idleMs }), attempt.idleMs);
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        received += value.byteLength;
        if (received > attempt.maxBytes) {
          attempt.breach({ kind: "size", bytes: attempt.maxBytes, maxTokens: attempt.maxTokens });
          await reader.cancel().catch(() => undefined);
          controller.error(new Error(`the reply is over ${attempt.maxBytes} bytes`));
          return;
        }
        controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      } finally {
        clearTimeout(idle);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** A fetch for the SDK that applies the current attempt's limits to the reply (plain fetch outside an attempt). */
export const limitedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const attempt = currentAttempt.getStore();
  if (!attempt || !response.body) return response;
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > attempt.maxBytes) {
    attempt.breach({ kind: "size", bytes: attempt.maxBytes, maxTokens: attempt.maxTokens });
    await response.body.cancel().catch(() => undefined);
    throw new Error(`the reply declares ${declared} bytes`);
  }
  return new Response(watchedBody(response.body, attempt), { status: response.status, statusText: response.statusText, headers: response.headers });
};
