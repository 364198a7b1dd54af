/**
 * The identity of a model request, for the response cache.
 *
 * A request is summarised as readable JSON: model id, the parameters that change
 * the answer (temperature, max tokens, extra params) and every message part in
 * order, with each image replaced by the sha256 and size of its decoded bytes. The
 * cache key is the sha256 of that summary written with sorted keys, so the key of a
 * stored entry can be recomputed from the entry itself.
 *
 * Left out on purpose: the API key, the endpoint (a cache made through one gateway
 * replays through another or with none), headers, timeouts and retry settings.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { sha256Hex } from "../files/content-hash.ts";
import { apiModelId, type ModelSpec } from "./spec.ts";

/** Bump when the summary's shape changes, so old entries stop matching instead of matching wrongly. */
export const REQUEST_KEY_VERSION = 1;

export type PartSummary =
  | { type: "text"; text: string }
  | { type: "image"; mimeType: string; sha256: string; bytes: number; detail?: string }
  | { type: "image"; url: string; detail?: string }
  /** Any other part type, kept only as a hash of its JSON. */
  | { type: "other"; partType: string; sha256: string };

export interface MessageSummary {
  role: string;
  content: PartSummary[];
}

export interface RequestSummary {
  keyVersion: number;
  model: string;
  temperature: number | null;
  maxTokens: number;
  extraParams: Record<string, unknown>;
  messages: MessageSummary[];
  /**
   * Which sample of the same request this is (1, 2, ... for the second, third draft made
   * at a temperature above 0): part of the key, so a repeat is a new answer, never a replay
   * of the first. Absent for the first sample, so earlier keys stay valid.
   */
  sample?: number;
  /**
   * A labelled track whose answers must never be shared with the usual one (the agent with
   * oracle feedback sends, at first, the very requests a self-checking agent sends): part
   * of the key only, never sent. Absent for the usual track, so earlier keys stay valid.
   */
  track?: string;
}

export interface DescribedRequest {
  /** The spec's name: the cache folder (the id sent, `summary.model`, is in the key). */
  name: string;
  summary: RequestSummary;
  /** sha256 hex of the canonical summary. */
  hash: string;
  imageCount: number;
}

/** JSON with object keys sorted at every depth, so equal values always give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner;
    const record = inner as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((key) => [key, record[key]]),
    );
  });
}

const DATA_URL = /^data:([^;,]*)(;base64)?,(.*)$/s;

function imageFromURL(url: string, detail: unknown): PartSummary {
  const withDetail = typeof detail === "string" ? { detail } : {};
  const match = DATA_URL.exec(url);
  if (!match) return { type: "image", url, ...withDetail };
  const bytes = match[2] ? Buffer.from(match[3] ?? "", "base64") : Buffer.from(decodeURIComponent(match[3] ?? ""), "utf8");
  return { type: "image", mimeType: match[1] || "application/octet-stream", sha256: sha256Hex(bytes), bytes: bytes.length, ...withDetail };
}

function summarizePart(part: unknown): PartSummary {
  if (typeof part === "string") return { type: "text", text: part };
  if (part === null || typeof part !== "object") return { type: "other", partType: typeof part, sha256: sha256Hex(String(part)) };
  const record = part as Record<string, unknown>;
  if (record.type === "text" && typeof record.text === "string") return { type: "text", text: record.text };
  if (record.type === "image_url") {
    const imageURL = record.image_url;
    if (typeof imageURL === "string") return imageFromURL(imageURL, undefined);
    if (imageURL && typeof imageURL === "object" && "url" in imageURL && typeof imageURL.url === "string") {
      return imageFromURL(imageURL.url, "detail" in imageURL ? imageURL.detail : undefined);
    }
  }
  // LangChain's standard image block: { type: "image", data | url, mimeType }.
  if (record.type === "image" && typeof record.data === "string") {
    const bytes = Buffer.from(record.data, "base64");
    const mimeType = typeof record.mimeType === "string" ? record.mimeType : "application/octet-stream";
    return { type: "image", mimeType, sha256: sha256Hex(bytes), bytes: bytes.length };
  }
  if (record.type === "image" && typeof record.url === "string") return imageFromURL(record.url, undefined);
  return { type: "other", partType: String(record.type ?? "unknown"), sha256: sha256Hex(canonicalJson(record)) };
}

export function summarizeMessages(messages: readonly BaseMessage[]): MessageSummary[] {
  return messages.map((message) => {
    const content = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content.map(summarizePart);
    return { role: message.getType(), content };
  });
}

export function describeRequest(spec: ModelSpec, messages: readonly BaseMessage[], options: { sample?: number; track?: string } = {}): DescribedRequest {
  const summarized = summarizeMessages(messages);
  const summary: RequestSummary = {
    keyVersion: REQUEST_KEY_VERSION,
    model: apiModelId(spec),
    temperature: spec.temperature,
    maxTokens: spec.maxTokens,
    extraParams: spec.extraParams,
    messages: summarized,
    ...(options.sample ? { sample: options.sample } : {}),
    ...(options.track ? { track: options.track } : {}),
  };
  const imageCount = summarized.reduce((count, message) => count + message.content.filter((part) => part.type === "image").length, 0);
  return { name: spec.name, summary, hash: requestHash(summary), imageCount };
}

export function requestHash(summary: RequestSummary): string {
  return sha256Hex(canonicalJson(summary));
}
