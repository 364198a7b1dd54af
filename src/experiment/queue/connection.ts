/**
 * The Redis behind queue mode: its URL checked and turned into connection options, and a
 * reachability check that fails at once with a clear message instead of BullMQ's endless
 * reconnecting.
 *
 * Once a coordinator or a worker is running, a Redis that goes away is retried with a
 * bounded back-off (redisRetryDelay), and watched (RedisLink): one line when it is lost,
 * one when it is back, and after IWR_QUEUE_REDIS_GIVE_UP_MS (3 min by default) without it
 * the process gives up with an error that names the URL and how long it was unreachable.
 */
import type { RedisOptions } from "bullmq";
import { Redis } from "ioredis";
import { errorMessage, IwrError } from "../../errors.ts";
import { log } from "../../log/logger.ts";

/** The environment variable that sets how long a running coordinator or worker waits for a lost Redis. */
export const REDIS_GIVE_UP_ENV = "IWR_QUEUE_REDIS_GIVE_UP_MS";
export const DEFAULT_REDIS_GIVE_UP_MS = 180_000;

/** The wait before reconnection attempt `attempt` (1, 2, …): 250 ms, doubled each time, at most 5 s. */
export function redisRetryDelay(attempt: number): number {
  return Math.min(250 * 2 ** Math.max(0, Math.min(attempt - 1, 10)), 5_000);
}

/** How long a lost Redis is waited for before giving up: IWR_QUEUE_REDIS_GIVE_UP_MS, or 3 min. */
export function redisGiveUpMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[REDIS_GIVE_UP_ENV]?.trim();
  if (text === undefined || text === "") return DEFAULT_REDIS_GIVE_UP_MS;
  if (!/^\d+$/.test(text) || Number(text) <= 0)
    throw new IwrError("CONFIG_INVALID", `${REDIS_GIVE_UP_ENV}: expected a positive number of milliseconds, got '${text}'`);
  return Number(text);
}

/** "42 s", "3 min", "3 min 5 s" (whole seconds, rounded down). */
export function durationText(ms: number): string {
  const total = Math.floor(ms / 1000);
  if (total < 60) return `${total} s`;
  const minutes = Math.floor(total / 60);
  return total % 60 === 0 ? `${minutes} min` : `${minutes} min ${total % 60} s`;
}

const CONNECTION_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ECONNABORTED",
]);

/** An error of the connection to Redis itself (refused, reset, closed), which RedisLink reports once, not each time a client retries. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string" && CONNECTION_ERROR_CODES.has(code)) return true;
  return /Connection is closed|Stream isn't writeable|connect ETIMEDOUT|ECONNREFUSED|ECONNRESET/.test(errorMessage(error));
}

/** redis://[user:password@]host[:port][/db] or rediss:// (TLS). */
export function redisOptionsOf(url: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new IwrError("CONFIG_INVALID", `--queue: '${url}' is not a URL (expected redis://host:port)`);
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")
    throw new IwrError("CONFIG_INVALID", `--queue: expected a redis:// or rediss:// URL, got '${displayRedisURL(url)}'`);
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) throw new IwrError("CONFIG_INVALID", `--queue: '${db}' is not a Redis database number`);
  return {
    host: parsed.hostname || "127.0.0.1",
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {}),
    // BullMQ's blocking connections wait for jobs without a per-request retry limit.
    maxRetriesPerRequest: null,
    // Reconnect with a bounded back-off; how long to keep at it is RedisLink's decision.
    retryStrategy: redisRetryDelay,
    // A client disconnected after its socket died would otherwise keep the process alive for ioredis's 2 s.
    disconnectTimeout: 500,
  };
}

/** The URL without its password, for messages and logs. */
export function displayRedisURL(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "<unparsable URL>";
  }
}

/** Connects once, without retrying, and pings: an unreachable or refusing Redis is an error within `timeoutMs`. */
export async function checkRedisReachable(url: string, timeoutMs = 3000): Promise<void> {
  const client = new Redis({
    ...redisOptionsOf(url),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // The socket's own error (ECONNREFUSED, ENOTFOUND, a timeout) says more than the "Connection is closed" that connect() rejects with.
  let socketError: unknown;
  client.on("error", (error) => (socketError ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new IwrError(
      "QUEUE",
      `cannot reach Redis at ${displayRedisURL(url)}: ${errorMessage(socketError ?? error) || "connection failed"} ` +
        "(is redis-server running there? iwr setup installs it)",
    );
  } finally {
    client.disconnect();
  }
}

/** Whether `promise` settled within `ms` (its outcome is left to its other readers); the timer holds the process no longer. */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** An 'error' listener for a BullMQ queue or worker: connection errors go to the debug log (RedisLink reports the outage once), the rest are said. */
export function queueErrorListener(what: string, say: (line: string) => void): (error: Error) => void {
  return (error) => {
    if (isConnectionError(error)) log("queue").debug(`${what}: ${errorMessage(error)}`);
    else say(`${what} error: ${errorMessage(error)}`);
  };
}

export interface RedisLinkOptions {
  /** Give up once Redis has been unreachable this long (redisGiveUpMs()). */
  giveUpMs: number;
  /** A line for the person watching: Redis lost, Redis back. */
  say: (line: string) => void;
  /** What giving up leaves behind and how to go on: the end of the give-up message. */
  afterGiveUp: string;
  /** How often Redis is pinged while connected (default 1 s); a ping unanswered for 5 s counts as a loss. */
  pollMs?: number;
}

/**
 * How long Redis has been down when the give-up timer fires: never less than the limit.
 * Node fires a timer once its event loop's clock, read at the loop's turn and kept in
 * whole milliseconds, has moved on by the delay, so `Date.now()` may show a millisecond
 * less; 2,999 ms of a 3,000 ms limit read "unreachable for 2 s" (a CI run saw it).
 */
export function downDurationAtGiveUp(downSince: number, now: number, giveUpMs: number): number {
  return Math.max(giveUpMs, now - downSince);
}

/**
 * A running coordinator's or worker's hold on Redis. `options` are the connection options for
 * its BullMQ queues and workers: their clients reconnect with the bounded back-off until
 * `close()`, then stop reconnecting. A client of its own watches Redis (a ping a second):
 * it says when Redis is lost and when it is back, and once Redis has been unreachable for
 * `giveUpMs` without a break, `lost` rejects with the give-up error, naming the URL (password
 * hidden), how long, and what comes next. The owner races its waits on Redis against `lost`:
 * BullMQ's own calls wait for Redis forever.
 */
export class RedisLink {
  readonly options: RedisOptions;
  /** Rejects with the give-up error (IwrError "QUEUE"); never resolves. */
  readonly lost: Promise<never>;
  private readonly url: string;
  private readonly settings: RedisLinkOptions;
  private readonly probe: Redis;
  private readonly timer: NodeJS.Timeout;
  private giveUpTimer: NodeJS.Timeout | undefined;
  private giveUp: (error: IwrError) => void = () => {};
  private downSince: number | undefined;
  private lastError = "";
  private pinging = false;
  private closed = false;
  private gaveUp = false;
  private downWaiters: (() => void)[] = [];

  constructor(url: string, settings: RedisLinkOptions) {
    this.url = url;
    this.settings = settings;
    this.options = { ...redisOptionsOf(url), retryStrategy: (attempt: number) => (this.closed ? null : redisRetryDelay(attempt)) };
    this.lost = new Promise<never>((_resolve, reject) => (this.giveUp = reject));
    // Whoever races it sees the rejection; nobody racing it is no unhandled rejection.
    this.lost.catch(() => {});
    // The probe reconnects at least once per poll (not on the clients' back-off, up to 5 s): a Redis that is back is seen, and said,
    // within about a poll, before a run that finishes through the reconnected clients closes the link.
    const pollMs = settings.pollMs ?? 1_000;
    this.probe = new Redis({
      ...this.options,
      retryStrategy: (attempt: number) => (this.closed ? null : Math.min(redisRetryDelay(attempt), pollMs)),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 5_000,
    });
    this.probe.on("error", (error) => (this.lastError = errorMessage(error)));
    this.probe.on("close", () => this.markDown());
    this.probe.on("ready", () => this.markUp());
    this.timer = setInterval(() => this.check(), pollMs);
  }

  /** Whether Redis is unreachable now (as last seen). */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** Resolves once Redis is unreachable (at once if it is now). */
  untilDown(): Promise<void> {
    if (this.down) return Promise.resolve();
    return new Promise((resolve) => this.downWaiters.push(resolve));
  }

  /** Stops watching, and every client of `options` stops reconnecting. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.giveUpTimer);
    this.probe.disconnect();
  }

  private check(): void {
    if (this.closed || this.probe.status !== "ready" || this.pinging) return;
    this.pinging = true;
    this.probe
      .ping()
      .then(
        () => this.markUp(),
        (error: unknown) => {
          this.lastError = errorMessage(error);
          this.markDown();
        },
      )
      .finally(() => (this.pinging = false));
  }

  private fail(): void {
    if (this.closed || this.downSince === undefined) return;
    this.gaveUp = true;
    const { giveUpMs } = this.settings;
    this.giveUp(
      new IwrError(
        "QUEUE",
        `Redis at ${displayRedisURL(this.url)} has been unreachable for ${durationText(downDurationAtGiveUp(this.downSince, Date.now(), giveUpMs))}` +
          `${this.lastError ? ` (last error: ${this.lastError})` : ""}, the limit set by ${REDIS_GIVE_UP_ENV} (${giveUpMs} ms): giving up. ` +
          this.settings.afterGiveUp,
      ),
    );
  }

  private markDown(): void {
    if (this.closed || this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.giveUpTimer = setTimeout(() => this.fail(), this.settings.giveUpMs);
    this.settings.say(
      `lost Redis at ${displayRedisURL(this.url)}; reconnecting, for up to ${durationText(this.settings.giveUpMs)} (${REDIS_GIVE_UP_ENV}) before giving up`,
    );
    for (const resolve of this.downWaiters.splice(0)) resolve();
  }

  private markUp(): void {
    if (this.closed || this.downSince === undefined || this.gaveUp) return;
    this.settings.say(`Redis at ${displayRedisURL(this.url)} is back after ${durationText(Date.now() - this.downSince)}`);
    clearTimeout(this.giveUpTimer);
    this.downSince = undefined;
    this.lastError = "";
  }
}
