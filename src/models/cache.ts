/**
 * The response cache: one readable JSON file per answered request, at
 * `<dir>/<model-dir>/<sha256>.json`, where the hash is the request key (see
 * request-key.ts; it holds the model id that was sent) and model-dir is the spec's
 * name in the benchmark's folder naming, so `iwr cache clear --model gpt-4o` finds it.
 *
 * Modes:
 * - `read-write` (default): a hit is answered from disk; a miss goes to the model
 *   and its answer is written (atomically: temp file in the same folder + rename).
 * - `replay`: a hit is answered from disk; a miss is IwrError("CACHE_MISS"). No key
 *   or endpoint is needed, so published runs can be re-scored offline.
 * - `off`: every call goes to the model; nothing is read, written or shared.
 *
 * Identical requests running at the same time (same dir, same key) are sent once:
 * the later callers wait for the first and get its answer marked `cacheHit: true`.
 * Failed calls are never stored. Entry text passes through the secret redactor
 * before it touches the disk.
 */
import fs from "node:fs";
import path from "node:path";
import { errorMessage, IwrError } from "../errors.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { moveAside } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import type { DescribedRequest, RequestSummary } from "./request-key.ts";
import { modelDirName } from "./spec.ts";
import type { FreshReply, ModelCallResult, TokenUsage } from "./types.ts";

export const CACHE_MODES = ["read-write", "replay", "off"] as const;
export type CacheMode = (typeof CACHE_MODES)[number];
export const CACHE_ENTRY_VERSION = 1;

export interface CacheEntry {
  version: number;
  key: string;
  /** The spec's name (the folder). */
  name: string;
  /** The model id sent to the endpoint. */
  model: string;
  /** ISO time the answer was received. */
  createdAt: string;
  request: RequestSummary;
  reply: { text: string };
  usage: TokenUsage;
  costUsd: number;
  /** How long the original call took. */
  latencyMs: number;
}

export interface ResponseCache {
  readonly dir: string;
  readonly mode: CacheMode;
  /** The answer for `request`: from disk, from an identical call in flight, or from `fetch` (then stored, when `accept` takes it). */
  through(request: DescribedRequest, fetch: () => Promise<FreshReply>, accept?: (text: string) => string | undefined): Promise<ModelCallResult>;
  /** The stored entry for a request, if any (and readable). */
  read(request: DescribedRequest): Promise<CacheEntry | undefined>;
}

/** `.cache/responses` under the working directory, unless IWR_CACHE_DIR says otherwise. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.IWR_CACHE_DIR || path.join(".cache", "responses"));
}

export function parseCacheMode(text: string): CacheMode {
  const mode = CACHE_MODES.find((candidate) => candidate === text);
  if (!mode) throw new IwrError("CONFIG_INVALID", `cache mode: expected one of ${CACHE_MODES.join("|")}, got '${text}'`);
  return mode;
}

export function entryPath(dir: string, name: string, key: string): string {
  return path.join(dir, modelDirName(name), `${key}.json`);
}

function isEntry(value: unknown, key: string): value is CacheEntry {
  if (value === null || typeof value !== "object") return false;
  const entry = value as Partial<CacheEntry>;
  return (
    entry.version === CACHE_ENTRY_VERSION &&
    entry.key === key &&
    typeof entry.reply?.text === "string" &&
    typeof entry.usage?.inputTokens === "number" &&
    typeof entry.usage.outputTokens === "number" &&
    typeof entry.costUsd === "number"
  );
}

interface Lookup {
  reply: FreshReply;
  fromDisk: boolean;
}

/** In-flight lookups of every cache in this process, by absolute dir + name + key. */
const inFlight = new Map<string, Promise<Lookup>>();

class DiskResponseCache implements ResponseCache {
  private readonly logger = log("cache");

  constructor(
    readonly dir: string,
    readonly mode: CacheMode,
  ) {}

  async read(request: DescribedRequest): Promise<CacheEntry | undefined> {
    const file = entryPath(this.dir, request.name, request.hash);
    let text: string;
    try {
      text = await fs.promises.readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new IwrError("IO", `cannot read cache entry ${file}: ${errorMessage(error)}`, { file });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (isEntry(parsed, request.hash)) return parsed;
    // Truncated, hand-edited or from an older version: moved aside, saying so, and treated as absent (read-write mode fetches it again).
    moveAside(file, parsed === undefined ? "not valid JSON" : "not a cache entry of this request and version", "the request is treated as not cached");
    return undefined;
  }

  async through(request: DescribedRequest, fetch: () => Promise<FreshReply>, accept?: (text: string) => string | undefined): Promise<ModelCallResult> {
    const started = Date.now();
    if (this.mode === "off") return { ...(await fetch()), cacheHit: false, requestHash: request.hash };
    // Registered before the first await, so a second identical call arriving while
    // the first is still reading the disk joins it instead of sending its own request.
    const flightKey = `${this.dir}\0${request.name}\0${request.hash}`;
    const running = inFlight.get(flightKey);
    if (running) {
      const { reply } = await running;
      return { ...reply, latencyMs: Date.now() - started, cacheHit: true, requestHash: request.hash };
    }
    const lookup = this.readOrFetch(request, fetch, accept);
    inFlight.set(flightKey, lookup);
    try {
      const { reply, fromDisk } = await lookup;
      return { ...reply, latencyMs: Date.now() - started, cacheHit: fromDisk, requestHash: request.hash };
    } finally {
      inFlight.delete(flightKey);
    }
  }

  private async readOrFetch(request: DescribedRequest, fetch: () => Promise<FreshReply>, accept?: (text: string) => string | undefined): Promise<Lookup> {
    let stored = await this.read(request);
    const refused = stored && accept?.(stored.reply.text);
    if (stored && refused !== undefined) {
      // Stored before replies were checked, or by a caller that took any text: not an answer, so not replayed.
      moveAside(entryPath(this.dir, request.name, request.hash), `the stored reply is not an answer: ${refused}`, "the request is sent again");
      stored = undefined;
    }
    if (stored) return { fromDisk: true, reply: { text: stored.reply.text, usage: stored.usage, costUsd: stored.costUsd, latencyMs: stored.latencyMs } };
    if (this.mode === "replay") {
      throw new IwrError(
        "CACHE_MISS",
        `replay mode: no cached answer for this ${request.summary.model} request (key ${request.hash.slice(0, 12)}…) in ${this.dir}; ` +
          "run in read-write mode to fetch it",
        { model: request.summary.model, key: request.hash, dir: this.dir },
      );
    }
    return { fromDisk: false, reply: await this.fetchAndStore(request, fetch, accept) };
  }

  private async fetchAndStore(request: DescribedRequest, fetch: () => Promise<FreshReply>, accept?: (text: string) => string | undefined): Promise<FreshReply> {
    const fresh = await fetch();
    const refused = accept?.(fresh.text);
    if (refused !== undefined) {
      // The caller records what the model said; the cache keeps answers only.
      this.logger.debug(`not caching a ${request.summary.model} reply that is not an answer (${refused})`);
      return fresh;
    }
    const entry: CacheEntry = {
      version: CACHE_ENTRY_VERSION,
      key: request.hash,
      name: request.name,
      model: request.summary.model,
      createdAt: new Date().toISOString(),
      request: request.summary,
      reply: { text: fresh.text },
      usage: fresh.usage,
      costUsd: fresh.costUsd,
      latencyMs: fresh.latencyMs,
    };
    const file = entryPath(this.dir, entry.name, entry.key);
    try {
      await writeFileAtomic(file, `${redactString(JSON.stringify(entry, null, 2))}\n`);
    } catch (error) {
      // The answer is paid for and correct: hand it back, and say loudly that it was not kept.
      this.logger.error(`could not store cache entry ${file}: ${errorMessage(error)}`);
    }
    return fresh;
  }
}

export function openResponseCache(dir: string = defaultCacheDir(), mode: CacheMode = "read-write"): ResponseCache {
  return new DiskResponseCache(path.resolve(dir), mode);
}
