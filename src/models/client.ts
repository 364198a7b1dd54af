/**
 * The model client every generator and judge calls: LangChain messages in, text,
 * usage, cost and cache status out.
 *
 * The default chat model is ChatOpenAI against the spec's OpenAI-compatible
 * endpoint, built with `maxRetries: 0` and the spec's timeout; retries are ours
 * (retry.ts), each attempt waits its turn in the endpoint's concurrency limit, and
 * the key and endpoint are read only when a request really has to go out. Any other
 * BaseChatModel (a fake in tests, another provider) can be injected as `chatModel`
 * and gets the same cache, retries and error messages.
 *
 * Without a `cache` every call goes to the model and identical calls are not merged.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { IwrError, type IwrErrorCode } from "../errors.ts";
import { log } from "../log/logger.ts";
import type { ResponseCache } from "./cache.ts";
import { type BrokenLimit, defaultIdleBodyMs, limitedFetch, maxReplyBytes, withCallLimits } from "./call-limits.ts";
import { resolveEndpoint } from "./endpoint.ts";
import { endpointLimiter } from "./limiter.ts";
import { describeRequest } from "./request-key.ts";
import { type AttemptFailure, withRetries } from "./retry.ts";
import { apiModelId, costUsd, type ModelSpec } from "./spec.ts";
import type { FreshReply, InvokeOptions, ModelCallResult, ModelClient } from "./types.ts";

export interface ModelClientOptions {
  cache?: ResponseCache;
  /** A ready chat model to use instead of ChatOpenAI (no endpoint, key or concurrency limit involved). */
  chatModel?: BaseChatModel;
  /** No byte of a reply's body for this long ends the call (default 30 s, or IWR_MODEL_IDLE_MS; at most timeoutMs). */
  idleBodyMs?: number;
}

/** An attempt ended by one of its limits (call-limits.ts), with the SDK's own error as the cause. */
class CallLimitError extends Error {
  constructor(
    readonly limit: BrokenLimit,
    cause: unknown,
  ) {
    super(`call limit: ${limit.kind}`, { cause });
    this.name = "CallLimitError";
  }
}

type Invoker = (messages: BaseMessage[], signal: AbortSignal | undefined) => Promise<AIMessageChunk>;

interface Connection {
  invoke: Invoker;
  /** Where requests go, for messages ("http://127.0.0.1:8000/v1", or "injected chat model"). */
  where: string;
  keyEnv?: string;
}

const STATUS_HINTS: Record<number, string> = {
  400: "the endpoint rejected the request",
  401: "the API key was refused",
  403: "this key has no access to the model",
  404: "the endpoint does not know this model id or path",
  413: "the request is too large (too many or too big images?)",
  422: "the endpoint could not process the request",
  429: "rate limited",
};

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** One sentence for the last failure of a call, naming the model, the endpoint and what to check. */
function failureError(spec: ModelSpec, connection: Connection, last: AttemptFailure): Error {
  if (last.cause instanceof IwrError) return last.cause;
  const { failure, attempt } = last;
  const who = `model '${spec.name}' at ${connection.where}`;
  if (last.cause instanceof CallLimitError) return limitError(spec, who, last.cause);
  const tries = attempt > 1 ? ` after ${attempt} attempts` : "";
  const details = { model: spec.name, endpoint: connection.where, kind: failure.kind, status: failure.status, attempts: attempt };
  let code: IwrErrorCode = "MODEL";
  let message: string;
  switch (failure.kind) {
    case "timeout":
      message = `${who}: no reply within ${seconds(spec.timeoutMs)} (timeoutMs); the call was not retried`;
      break;
    case "connection":
      message = `${who}: the connection failed or dropped${tries}: ${failure.detail}`;
      break;
    case "aborted":
      message = `${who}: call cancelled`;
      break;
    case "reply":
      code = "MODEL_REPLY";
      message = `${who}: the answer is not a Chat Completions reply (${failure.detail})`;
      break;
    case "http": {
      const status = failure.status ?? 0;
      const hint = STATUS_HINTS[status] ?? (status >= 500 ? "server error" : "request failed");
      const keyHint = status === 401 && connection.keyEnv ? ` (check ${connection.keyEnv})` : "";
      message = `${who}: HTTP ${status}, ${hint}${keyHint}${tries}: ${failure.detail}`;
      break;
    }
  }
  return new IwrError(code, message, details, { cause: last.cause });
}

/** The error of an attempt one of its limits ended: never retried (the same request would most likely end the same way). */
function limitError(spec: ModelSpec, who: string, error: CallLimitError): IwrError {
  const { limit } = error;
  const details = { model: spec.name, limit: limit.kind };
  switch (limit.kind) {
    case "deadline":
      return new IwrError("MODEL", `${who}: no reply within ${seconds(limit.ms)} (timeoutMs); the call was not retried`, details, { cause: error.cause });
    case "idle":
      return new IwrError(
        "MODEL",
        `${who}: no byte of the reply for ${seconds(limit.ms)} after its headers (a stalled reply); the call was not retried`,
        details,
        { cause: error.cause },
      );
    case "size":
      return new IwrError(
        "MODEL_REPLY",
        `${who}: the reply is larger than max_tokens ${limit.maxTokens} allows (over ${limit.bytes.toLocaleString("en-US")} bytes); refused, not retried`,
        { ...details, maxBytes: limit.bytes },
        { cause: error.cause },
      );
  }
}

function openAIConnection(spec: ModelSpec): Connection {
  const endpoint = resolveEndpoint(spec);
  const chat = new ChatOpenAI({
    model: apiModelId(spec),
    apiKey: endpoint.apiKey,
    // Our fetch: the attempt's deadline, idle-body and size limits reach the wire (call-limits.ts).
    configuration: { baseURL: endpoint.baseURL, fetch: limitedFetch },
    // null means "send none": reasoning models reject any temperature but their own.
    temperature: spec.temperature ?? undefined,
    maxTokens: spec.maxTokens,
    // Always explicit: ChatOpenAI would retry 6 times on top of our loop.
    maxRetries: 0,
    timeout: spec.timeoutMs,
    streaming: false,
    modelKwargs: spec.extraParams,
  });
  const limit = endpointLimiter(endpoint.baseURL, spec.concurrency);
  return {
    invoke: (messages, signal) => limit(() => chat.invoke(messages, { signal })),
    where: endpoint.displayURL,
    keyEnv: endpoint.keyless ? undefined : spec.apiKeyEnv,
  };
}

export function createModelClient(spec: ModelSpec, options: ModelClientOptions = {}): ModelClient {
  const logger = log("models");
  const injected = options.chatModel;
  let connection: Connection | undefined;
  // Built on first use, so a replay from the cache needs neither key nor endpoint.
  const connect = (): Connection => {
    connection ??= injected ? { invoke: (messages, signal) => injected.invoke(messages, { signal }), where: "injected chat model" } : openAIConnection(spec);
    return connection;
  };

  async function fetchReply(messages: BaseMessage[], signal: AbortSignal | undefined, allowEmpty: boolean): Promise<FreshReply> {
    const target = connect();
    const started = Date.now();
    const limits = { timeoutMs: spec.timeoutMs, idleMs: options.idleBodyMs ?? defaultIdleBodyMs(), maxTokens: spec.maxTokens };
    const attempt = () =>
      withCallLimits(limits, signal, (limited) =>
        target.invoke(messages, limited.signal).catch((error: unknown) => {
          const broken = limited.broken();
          throw broken ? new CallLimitError(broken, error) : error;
        }),
      );
    const reply = await withRetries(attempt, spec, {
      signal,
      onRetry: (failure, attempt, delayMs) =>
        logger.warn(
          `${spec.name}: ${failure.status ? `HTTP ${failure.status}` : failure.kind} on attempt ${attempt} of ${spec.maxRetries + 1}; ` +
            `retrying in ${seconds(delayMs)}`,
        ),
      fail: (last) => failureError(spec, target, last),
    });
    const text = reply.text;
    // The same size rule for any chat model (an injected one has no wire to watch).
    if (Buffer.byteLength(text, "utf8") > maxReplyBytes(spec.maxTokens)) {
      throw limitError(
        spec,
        `model '${spec.name}' at ${target.where}`,
        new CallLimitError({ kind: "size", bytes: maxReplyBytes(spec.maxTokens), maxTokens: spec.maxTokens }, undefined),
      );
    }
    if (text.trim() === "" && !allowEmpty) {
      const finish = reply.response_metadata?.finish_reason;
      const why =
        finish === "length"
          ? `; finish_reason 'length': the output budget of ${spec.maxTokens} tokens ran out (reasoning models can spend it all thinking)`
          : finish
            ? `; finish_reason '${String(finish)}'`
            : "";
      throw new IwrError("MODEL_REPLY", `model '${spec.name}' at ${target.where} answered with empty content${why}`, {
        model: spec.name,
        finishReason: finish,
      });
    }
    const usage = { inputTokens: reply.usage_metadata?.input_tokens ?? 0, outputTokens: reply.usage_metadata?.output_tokens ?? 0 };
    return { text, usage, costUsd: costUsd(spec, usage), latencyMs: Date.now() - started };
  }

  return {
    spec,
    async invoke(messages: BaseMessage[], invokeOptions: InvokeOptions = {}): Promise<ModelCallResult> {
      const request = describeRequest(spec, messages, {
        ...(invokeOptions.sample ? { sample: invokeOptions.sample } : {}),
        ...(invokeOptions.track ? { track: invokeOptions.track } : {}),
      });
      if (request.imageCount > spec.maxImages && !invokeOptions.allowOverImageCap) {
        throw new IwrError("MODEL", `request for model '${spec.name}' has ${request.imageCount} images; its maxImages is ${spec.maxImages}`, {
          model: spec.name,
          images: request.imageCount,
        });
      }
      const fetch = (): Promise<FreshReply> => fetchReply(messages, invokeOptions.signal, invokeOptions.allowEmptyReply === true);
      const result = options.cache
        ? await options.cache.through(request, fetch, invokeOptions.accept)
        : { ...(await fetch()), cacheHit: false, requestHash: request.hash };
      // Figures go in the text: the redactor masks any log field whose name contains "token".
      logger.debug(
        `${spec.name}: ${result.cacheHit ? "cache hit" : "answered"} ${request.hash.slice(0, 12)} in ${result.latencyMs} ms, ` +
          `${result.usage.inputTokens} in / ${result.usage.outputTokens} out, $${result.costUsd.toFixed(4)}`,
      );
      return result;
    },
  };
}

/** Samples per repeat: a repeat's sample indices start here, above any breadth a run uses. */
export const SAMPLES_PER_REPEAT = 1000;

/**
 * The same client, with every request marked as a sample of repeat `repeat` (0 = the
 * first, unchanged): a repeat of an experiment at temperature > 0 gets new answers, never
 * a cache replay of the first repeat's, while its own breadth samples stay distinct.
 */
export function forRepeat(client: ModelClient, repeat: number): ModelClient {
  if (repeat === 0) return client;
  return {
    spec: client.spec,
    invoke: (messages, options = {}) => client.invoke(messages, { ...options, sample: repeat * SAMPLES_PER_REPEAT + (options.sample ?? 0) }),
  };
}

/**
 * The same client, every request keyed under a labelled track (cache key only, nothing
 * sent changes): a track's answers are never replayed to the usual one, nor the usual
 * one's to it, though their requests are the same.
 */
export function forTrack(client: ModelClient, track: string): ModelClient {
  return { spec: client.spec, invoke: (messages, options = {}) => client.invoke(messages, { ...options, track }) };
}
