/**
 * Queue mode when its Redis goes away (issue #34), with real redis-servers on 127.0.0.1 and
 * real `iwr run --queue` and `iwr worker` processes (about 1 min, so in `npm run test:long`):
 * a Redis killed and not restarted ends a coordinator and a worker with exit code 3 once
 * IWR_QUEUE_REDIS_GIVE_UP_MS (shortened here) has passed, saying so; SIGTERM stops either
 * within a few seconds while Redis is down; and a Redis restarted empty in time is used
 * again, every cell finishing. The quick parts (back-off, limit, RedisLink) are in
 * queue-redis.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RUN_LOCK } from "../../src/results/layout.ts";
import { DATA, evaluatorBlock, experimentFixture, readJson, TEST_MS, writeConfig } from "../support/experiment.ts";
import { filesUnder, type IwrProcess, startIwr, until } from "../support/iwr-processes.ts";
import { type RedisServer, startRedisServer } from "../support/redis-server.ts";

const fixture = experimentFixture("experiment-queue-redis");

const blankConfig = (base: string, ids: readonly number[]) =>
  writeConfig(
    path.join(base, "config.yaml"),
    `tasks:\n  file: ${DATA}\n  ids: [${ids.join(", ")}]\nout: run\n${evaluatorBlock}arms:\n  - name: blank\n    kind: blank\n`,
  );

/** The test's environment for the processes; the give-up limit only when given (else the 3 min default). */
function envFor(base: string, giveUpMs?: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, IWR_CACHE_DIR: path.join(base, "cache"), IWR_LOG_LEVEL: "warn" };
  delete env.IWR_QUEUE_REDIS_GIVE_UP_MS;
  if (giveUpMs !== undefined) env.IWR_QUEUE_REDIS_GIVE_UP_MS = String(giveUpMs);
  return env;
}

/** Ends what a test left running (its processes, its redis-servers). */
async function cleanUp(processes: (IwrProcess | undefined)[], servers: (RedisServer | undefined)[]): Promise<void> {
  for (const process of processes)
    if (process && process.child.exitCode === null && process.child.signalCode === null) {
      process.child.kill("SIGKILL");
      await process.exited;
    }
  for (const server of servers) await server?.stop();
}

/** What no exit should print: a stack trace, an unhandled rejection, a line per reconnection attempt. */
function expectNoNoise(lines: string[]): void {
  const text = lines.join("\n");
  expect(text).not.toMatch(/Unhandled|UnhandledPromiseRejection|^\s+at /m);
  expect(text).not.toMatch(/queue error|worker error/);
  expect(lines.filter((line) => line.startsWith("lost Redis at"))).toHaveLength(1);
}

describe("queue mode, Redis killed and not restarted", () => {
  it(
    "the coordinator exits with code 3 once IWR_QUEUE_REDIS_GIVE_UP_MS has passed, naming the URL and how long, and saying a rerun resumes",
    async () => {
      const base = path.join(fixture.dir(), "coordinator-gives-up");
      const config = blankConfig(base, [1]);
      const runDir = path.join(base, "run");
      const redis = await startRedisServer();
      const coordinator = startIwr(["run", config, "--queue", redis.url], envFor(base, 3000));
      try {
        await until("the coordinator to queue its cell", () => coordinator.lines.some((line) => line.startsWith("queued 1 cell(s)")));
        await redis.stop("SIGKILL");
        const killedAt = Date.now();
        expect(await coordinator.exited, coordinator.lines.join("\n")).toBe(3);
        const waited = Date.now() - killedAt;
        expect(waited).toBeGreaterThanOrEqual(3000);
        expect(waited).toBeLessThan(10_000);
        const message = coordinator.lines.filter((line) => line.startsWith("iwr: QUEUE: Redis at"));
        expect(message).toHaveLength(1);
        expect(message[0]).toMatch(
          new RegExp(
            `^iwr: QUEUE: Redis at redis://127\\.0\\.0\\.1:${redis.port} has been unreachable for [34] s ` +
              `\\(last error: connect ECONNREFUSED 127\\.0\\.0\\.1:${redis.port}\\), ` +
              "the limit set by IWR_QUEUE_REDIS_GIVE_UP_MS \\(3000 ms\\): giving up\\. " +
              `The coordinator stops: the cells finished so far are kept in ${runDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, ` +
              `and once Redis is back, iwr run .*config\\.yaml --queue redis://127\\.0\\.0\\.1:${redis.port} resumes the run from them\\.$`,
          ),
        );
        expectNoNoise(coordinator.lines);
        // The run folder is kept as it was, and free for the rerun.
        expect(readJson(path.join(runDir, "run.json")).runKey).toMatch(/^[0-9a-f]{64}$/);
        expect(fs.existsSync(path.join(runDir, RUN_LOCK))).toBe(false);
      } finally {
        await cleanUp([coordinator], [redis]);
      }
    },
    TEST_MS,
  );

  it(
    "a worker exits with code 3 once IWR_QUEUE_REDIS_GIVE_UP_MS has passed, the URL's password hidden",
    async () => {
      const base = path.join(fixture.dir(), "worker-gives-up");
      const redis = await startRedisServer();
      // A password the server does not ask for: ioredis warns and goes on, and the URL shown must hide it.
      const url = `redis://:secret-word@127.0.0.1:${redis.port}`;
      const worker = startIwr(["worker", "--queue", url], envFor(base, 3000));
      try {
        await until("the worker to take jobs", () => worker.lines.some((line) => / taking jobs from /.test(line)));
        await redis.stop("SIGKILL");
        const killedAt = Date.now();
        expect(await worker.exited, worker.lines.join("\n")).toBe(3);
        const waited = Date.now() - killedAt;
        expect(waited).toBeGreaterThanOrEqual(3000);
        expect(waited).toBeLessThan(10_000);
        expect(worker.lines.filter((line) => line.startsWith("iwr: QUEUE: Redis at"))).toEqual([
          expect.stringMatching(
            new RegExp(
              `^iwr: QUEUE: Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${redis.port} has been unreachable for [34] s ` +
                "\\(last error: connect ECONNREFUSED .*\\), the limit set by IWR_QUEUE_REDIS_GIVE_UP_MS \\(3000 ms\\): giving up\\. " +
                "This worker stops: the cells it finished are kept in their run folder, " +
                "its unfinished jobs are taken up again once Redis is back, and a coordinator that stopped too resumes the run when run again\\.$",
            ),
          ),
        ]);
        expect(worker.lines.join("\n")).not.toContain("secret-word");
        expectNoNoise(worker.lines);
      } finally {
        await cleanUp([worker], [redis]);
      }
    },
    TEST_MS,
  );
});

describe("queue mode, SIGTERM while Redis is down", () => {
  it(
    "a coordinator waiting on a dead Redis (3 min limit) stops within a few seconds of SIGTERM, its report written, the cell left unfinished",
    async () => {
      const base = path.join(fixture.dir(), "coordinator-sigterm");
      const config = blankConfig(base, [1]);
      const runDir = path.join(base, "run");
      const redis = await startRedisServer();
      const coordinator = startIwr(["run", config, "--queue", redis.url], envFor(base));
      try {
        await until("the coordinator to queue its cell", () => coordinator.lines.some((line) => line.startsWith("queued 1 cell(s)")));
        await redis.stop("SIGKILL");
        await until("the coordinator to see Redis lost", () => coordinator.lines.some((line) => line.startsWith("lost Redis at")));
        // Let its reconnection back-off grow a little first.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const signalledAt = Date.now();
        coordinator.child.kill("SIGTERM");
        expect(await coordinator.exited, coordinator.lines.join("\n")).toBe(1);
        expect(Date.now() - signalledAt).toBeLessThan(5000);
        expect(coordinator.lines.join("\n")).toMatch(/1 cell\(s\) unfinished \(the run was stopped\)/);
        expect(fs.existsSync(path.join(runDir, "report.json"))).toBe(true);
        expect(coordinator.lines.join("\n")).toContain("reconnecting, for up to 3 min (IWR_QUEUE_REDIS_GIVE_UP_MS)");
        expectNoNoise(coordinator.lines);
      } finally {
        await cleanUp([coordinator], [redis]);
      }
    },
    TEST_MS,
  );

  it(
    "a worker whose Redis is down stops within a few seconds of SIGTERM",
    async () => {
      const base = path.join(fixture.dir(), "worker-sigterm");
      const redis = await startRedisServer();
      const worker = startIwr(["worker", "--queue", redis.url], envFor(base));
      try {
        await until("the worker to take jobs", () => worker.lines.some((line) => / taking jobs from /.test(line)));
        await redis.stop("SIGKILL");
        await until("the worker to see Redis lost", () => worker.lines.some((line) => line.startsWith("lost Redis at")));
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const signalledAt = Date.now();
        worker.child.kill("SIGTERM");
        expect(await worker.exited, worker.lines.join("\n")).toBe(0);
        expect(Date.now() - signalledAt).toBeLessThan(5000);
        expectNoNoise(worker.lines);
      } finally {
        await cleanUp([worker], [redis]);
      }
    },
    TEST_MS,
  );
});

describe("queue mode, Redis back within the limit", () => {
  it(
    "Redis restarted empty mid-run: the coordinator and the worker use it again, and all cells finish",
    async () => {
      const base = path.join(fixture.dir(), "restarted");
      // Three cells: the worker evaluates one at a time, so when Redis is killed (after the first record) at most the second
      // can still finish without it; the third's jobs are lost with Redis, and only the coordinator queueing it again on
      // the restarted Redis gets it done. (With two, both could finish during the outage, and the coordinator end before
      // Redis is back, rightly without a line saying it is.)
      const config = blankConfig(base, [1, 2, 3]);
      const runDir = path.join(base, "run");
      let redis: RedisServer | undefined = await startRedisServer();
      const { port } = redis;
      const env = envFor(base, 60_000);
      const coordinator = startIwr(["run", config, "--queue", redis.url], env);
      const worker = startIwr(["worker", "--queue", redis.url, "--generate", "1", "--evaluate", "1", "--stall-ms", "4000"], env);
      try {
        await until("a first finished cell", () => filesUnder(runDir, "cell.json").length >= 1);
        await redis.stop("SIGKILL");
        await until(
          "both to see Redis lost",
          () => [coordinator, worker].every((process) => process.lines.some((line) => line.startsWith("lost Redis at"))),
          30_000,
        );
        // Down for a while (past the first retries), then back on the same port with nothing in it.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        redis = await startRedisServer(port);
        expect(await coordinator.exited, coordinator.lines.join("\n")).toBe(0);
        expect(filesUnder(runDir, "cell.json")).toHaveLength(3);
        for (const name of filesUnder(runDir, "cell.json")) expect(readJson(path.join(runDir, name)).status, name).toBe("finished");
        const isBack = (line: string) => /^Redis at redis:\/\/127\.0\.0\.1:\d+ is back after \d+ s$/.test(line);
        // The coordinator used the restarted Redis for the last cell: it said Redis was back before it finished.
        expect(coordinator.lines.some(isBack), coordinator.lines.join("\n")).toBe(true);
        // The worker, still running, says so within about a second of Redis answering (it may not have by the coordinator's end).
        await until("the worker to see Redis back", () => worker.lines.some(isBack), 10_000);
        for (const process of [coordinator, worker]) expect(process.lines.join("\n")).not.toMatch(/Unhandled|^\s+at |iwr: QUEUE/m);
        worker.child.kill("SIGTERM");
        expect(await worker.exited).toBe(0);
      } finally {
        await cleanUp([coordinator, worker], [redis]);
      }
    },
    TEST_MS,
  );
});
