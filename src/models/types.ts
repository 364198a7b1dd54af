/** Shapes shared by the model client, the response cache and whoever adds up usage. */
import type { BaseMessage } from "@langchain/core/messages";
import type { ModelSpec } from "./spec.ts";

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelCallResult {
  text: string;
  /** For a cache hit: the usage of the call that produced the answer originally. */
  usage: TokenUsage;
  /** For a cache hit: what the answer cost when it was fetched (nothing was spent now; see `cacheHit`). */
  costUsd: number;
  /** Wall time of this call, as the caller waited (a cache hit takes milliseconds). */
  latencyMs: number;
  /** True when the answer came from the cache or from an identical request already in flight. */
  cacheHit: boolean;
  /** The cache key of the request (sha256 of its summary). */
  requestHash: string;
}

export interface InvokeOptions {
  signal?: AbortSignal;
  /** The sample index of a request sent several times on purpose (see RequestSummary.sample); 0 or absent for the first. */
  sample?: number;
  /** A labelled track's name, part of the cache key only (see RequestSummary.track). */
  track?: string;
  /**
   * The harness's ways, for the official profile: send every image even past the spec's
   * maxImages (it sends all sheets when they alone exceed the cap), and hand back an
   * empty reply as "" instead of failing (it writes an empty page and scores it).
   */
  allowOverImageCap?: boolean;
  allowEmptyReply?: boolean;
  /**
   * Whether a reply is an answer to this request (e.g. it parses as the JSON asked for): the
   * reason it is not, or undefined. A reply that is not is handed back to the caller (who
   * records it) but never stored in the response cache, and a stored one that is not is
   * moved aside and asked again: a bad answer must not be replayed on the next round or run.
   */
  accept?: (text: string) => string | undefined;
}

export interface ModelClient {
  readonly spec: ModelSpec;
  invoke(messages: BaseMessage[], options?: InvokeOptions): Promise<ModelCallResult>;
}

/** One answer fresh from a model, before the cache marks it. */
export interface FreshReply {
  text: string;
  usage: TokenUsage;
  costUsd: number;
  latencyMs: number;
}
