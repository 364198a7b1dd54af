/**
 * Queue mode, bad input, with a real redis-server on 127.0.0.1: an unreachable Redis fails
 * at once, and a worker that does not see the coordinator's run folder refuses jobs without
 * writing. The end-to-end runs with a killed worker are in queue.long.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { redisOptionsOf } from "../../src/experiment/queue/connection.ts";
import { GENERATE_QUEUE } from "../../src/experiment/queue/jobs.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, evaluatorBlock, experimentFixture, readJson, TEST_MS, writeConfig } from "../support/experiment.ts";
import { filesUnder, startIwr, until } from "../support/iwr-processes.ts";
import { freePort, redisFixture } from "../support/redis-server.ts";

const fixture = experimentFixture("experiment-queue");
const redisServer = redisFixture();

describe("queue mode, bad input", () => {
  it("an unreachable Redis URL fails at once with a clear message, for the coordinator and for a worker", async () => {
    const port = await freePort();
    const config = writeConfig(
      path.join(fixture.dir(), "unreachable", "config.yaml"),
      `tasks:\n  file: ${DATA}\n  ids: [1]\nout: run\narms:\n  - name: blank\n    kind: blank\n`,
    );
    for (const args of [
      ["run", config, "--queue", `redis://127.0.0.1:${port}`],
      ["worker", "--queue", `redis://:secret-word@127.0.0.1:${port}`],
    ]) {
      const output: string[] = [];
      const started = Date.now();
      const code = await runIwrCapturing(output, args);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(code).toBe(3);
      expect(output.join("\n")).toMatch(new RegExp(`cannot reach Redis at redis://.*127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
      expect(output.join("\n")).not.toContain("secret-word");
    }
    expect(fs.existsSync(path.join(fixture.dir(), "unreachable", "run"))).toBe(false);
    const output: string[] = [];
    expect(await runIwrCapturing(output, ["run", config, "--queue", "http://127.0.0.1:6379"])).toBe(2);
    expect(output.join("\n")).toMatch(/--queue: expected a redis:\/\/ or rediss:\/\/ URL/);
  });

  it(
    "a worker that does not see the coordinator's run folder (another run.json there) refuses the job, writes nothing and stops",
    async () => {
      const base = path.join(fixture.dir(), "mismatch");
      const config = writeConfig(
        path.join(base, "config.yaml"),
        `tasks:\n  file: ${DATA}\n  ids: [1]\nout: run\n${evaluatorBlock}arms:\n  - name: blank\n    kind: blank\n`,
      );
      const runDir = path.join(base, "run");
      const env = { ...process.env, IWR_CACHE_DIR: path.join(base, "cache"), IWR_LOG_LEVEL: "warn" };
      const coordinator = startIwr(["run", config, "--queue", redisServer().url], env);
      try {
        await until("the coordinator to queue its cell", () => coordinator.lines.some((line) => line.startsWith("queued 1 cell(s)")));
        // As if another folder were mounted at the run folder's path on the worker's machine.
        const record = readJson(path.join(runDir, "run.json"));
        fs.writeFileSync(path.join(runDir, "run.json"), JSON.stringify({ ...record, runKey: "f".repeat(64) }));
        const worker = startIwr(["worker", "--queue", redisServer().url], env);
        expect(await worker.exited).toBe(2);
        expect(worker.lines.join("\n")).toMatch(
          new RegExp(
            "refused task 1 × blank r0: .*run\\.json on this machine has run key f{16}, the coordinator's is [0-9a-f]{16}: " +
              "this is not the coordinator's run folder; nothing was written",
          ),
        );
        expect(filesUnder(runDir, "cell.json")).toEqual([]);
        expect(filesUnder(runDir, "eval.json")).toEqual([]);
        // The job is back in the queue, no attempt used, for a worker that sees the right folder.
        const queue = new Queue(GENERATE_QUEUE, { connection: redisOptionsOf(redisServer().url) });
        try {
          const jobs = await queue.getJobs(["delayed", "waiting"]);
          const job = jobs.find((entry) => entry.data.runKey === record.runKey);
          expect(job?.attemptsMade).toBe(0);
          await job?.remove();
        } finally {
          await queue.close();
        }
      } finally {
        coordinator.child.kill("SIGKILL");
        await coordinator.exited;
      }
    },
    TEST_MS,
  );
});
