/**
 * Queue mode's hold on Redis, quickly: the reconnection back-off, the give-up limit read from
 * IWR_QUEUE_REDIS_GIVE_UP_MS, which errors count as the connection's, and RedisLink against
 * a real redis-server on 127.0.0.1 that is stopped (given up on after the limit) or
 * restarted in time (used again). The coordinator and worker processes losing their Redis
 * are in queue-redis-lost.long.test.ts.
 */
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import {
  DEFAULT_REDIS_GIVE_UP_MS,
  downDurationAtGiveUp,
  durationText,
  isConnectionError,
  RedisLink,
  redisGiveUpMs,
  redisOptionsOf,
  redisRetryDelay,
  settledWithin,
} from "../../src/experiment/queue/connection.ts";
import { startRedisServer } from "../support/redis-server.ts";

async function until(what: string, condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("queue mode's Redis settings", () => {
  it("reconnects with a growing back-off, capped at 5 s, and the BullMQ options carry it", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(redisRetryDelay)).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    expect(redisRetryDelay(10_000)).toBe(5000);
    expect(redisRetryDelay(0)).toBe(250);
    const options = redisOptionsOf("redis://:pw@127.0.0.1:6390/2");
    expect(options.retryStrategy?.(3)).toBe(1000);
    expect(options.maxRetriesPerRequest).toBeNull();
  });

  it("gives up after IWR_QUEUE_REDIS_GIVE_UP_MS, 3 min by default; anything but a positive whole number is a usage error", () => {
    expect(DEFAULT_REDIS_GIVE_UP_MS).toBe(180_000);
    expect(redisGiveUpMs({})).toBe(180_000);
    expect(redisGiveUpMs({ IWR_QUEUE_REDIS_GIVE_UP_MS: "" })).toBe(180_000);
    expect(redisGiveUpMs({ IWR_QUEUE_REDIS_GIVE_UP_MS: " 4000 " })).toBe(4000);
    for (const text of ["0", "-5", "1.5", "3m", "abc"]) {
      let error: unknown;
      try {
        redisGiveUpMs({ IWR_QUEUE_REDIS_GIVE_UP_MS: text });
      } catch (caught) {
        error = caught;
      }
      expect(error, text).toBeInstanceOf(IwrError);
      expect((error as IwrError).code).toBe("CONFIG_INVALID");
      expect((error as IwrError).message).toContain(`IWR_QUEUE_REDIS_GIVE_UP_MS: expected a positive number of milliseconds, got '${text}'`);
    }
  });

  it("says Redis was down for at least the limit when the give-up timer fires, though the clock may show a millisecond less", () => {
    expect(durationText(downDurationAtGiveUp(10_000, 12_999, 3_000))).toBe("3 s");
    expect(downDurationAtGiveUp(10_000, 13_000, 3_000)).toBe(3_000);
    expect(downDurationAtGiveUp(10_000, 14_250, 3_000)).toBe(4_250);
  });

  it("says durations in whole seconds and minutes, and tells connection errors from others", () => {
    expect([0, 999, 4_200, 59_999, 60_000, 185_000].map(durationText)).toEqual(["0 s", "0 s", "4 s", "59 s", "1 min", "3 min 5 s"]);
    expect(isConnectionError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isConnectionError(new Error("Connection is closed."))).toBe(true);
    expect(isConnectionError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true);
    expect(isConnectionError(new Error("Missing lock for job 1. moveToFinished"))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});

describe("RedisLink with a real redis-server", () => {
  it("a Redis stopped and not restarted: one line when it is lost, then `lost` rejects after the limit, naming the URL without its password", async () => {
    const redis = await startRedisServer();
    const lines: string[] = [];
    const url = `redis://:hidden-word@127.0.0.1:${redis.port}`;
    const link = new RedisLink(url, { giveUpMs: 1500, say: (line) => lines.push(line), afterGiveUp: "What next.", pollMs: 100 });
    const queue = new Queue("iwr-link-test", { connection: link.options });
    queue.on("error", () => {});
    try {
      await queue.getJobCounts();
      await redis.stop("SIGKILL");
      const lostAt = Date.now();
      await until("the loss to be seen", () => link.down);
      const error = await link.lost.catch((caught: unknown) => caught);
      const waited = Date.now() - lostAt;
      expect(waited).toBeGreaterThanOrEqual(1400);
      expect(waited).toBeLessThan(4000);
      expect(error).toBeInstanceOf(IwrError);
      expect((error as IwrError).code).toBe("QUEUE");
      expect((error as IwrError).message).toMatch(
        new RegExp(
          `^Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${redis.port} has been unreachable for 1 s \\(last error: .*ECONNREFUSED.*\\), ` +
            "the limit set by IWR_QUEUE_REDIS_GIVE_UP_MS \\(1500 ms\\): giving up\\. What next\\.$",
        ),
      );
      expect(lines).toEqual([`lost Redis at redis://:***@127.0.0.1:${redis.port}; reconnecting, for up to 1 s (IWR_QUEUE_REDIS_GIVE_UP_MS) before giving up`]);
      expect(JSON.stringify(lines) + String(error)).not.toContain("hidden-word");
    } finally {
      link.close();
      // A disconnect of a client waiting to reconnect never resolves (BullMQ waits for an 'end' ioredis does not send).
      await settledWithin(queue.disconnect(), 300);
      await redis.stop();
    }
  });

  it("a Redis restarted empty within the limit: it is used again, and `lost` never rejects", async () => {
    const redis = await startRedisServer();
    const lines: string[] = [];
    const link = new RedisLink(redis.url, { giveUpMs: 2500, say: (line) => lines.push(line), afterGiveUp: "", pollMs: 100 });
    const queue = new Queue("iwr-link-test", { connection: link.options });
    queue.on("error", () => {});
    let restarted: Awaited<ReturnType<typeof startRedisServer>> | undefined;
    let gaveUp = false;
    link.lost.catch(() => (gaveUp = true));
    try {
      await queue.add("before", {});
      await redis.stop("SIGKILL");
      await until("the loss to be seen", () => link.down);
      restarted = await startRedisServer(redis.port);
      await until("Redis to be seen back", () => !link.down);
      // The queue's own connection is back too: a command waiting for it goes through.
      await queue.add("after", {});
      expect(await queue.getJobCounts("waiting")).toEqual({ waiting: 1 });
      // Past the limit since the loss: no give-up.
      await new Promise((resolve) => setTimeout(resolve, 2600));
      expect(gaveUp).toBe(false);
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^lost Redis at redis:\/\/127\.0\.0\.1:\d+; reconnecting/);
      expect(lines[1]).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+ is back after \d+ s$/);
    } finally {
      link.close();
      await queue.close().catch(() => {});
      await restarted?.stop();
      await redis.stop();
    }
  });
});
