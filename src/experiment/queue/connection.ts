/**
 * The Redis behind queue mode: its URL checked and turned into connection options, and a
 * reachability check that fails at once with a clear message instead of BullMQ's endless
 * reconnecting.
 */
import type { RedisOptions } from "bullmq";
import { Redis } from "ioredis";
import { errorMessage, IwrError } from "../../errors.ts";

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
