/**
 * Queue mode with real parts, end to end (about 2 min, so in `npm run test:long`): a real
 * redis-server on 127.0.0.1, a coordinator (`iwr run --queue`) and worker processes
 * (`iwr worker`), real Chromium, and a local OpenAI-compatible server answering from a
 * script (a fixture). One worker is killed (SIGKILL) in the middle of an evaluation and the
 * other takes its job up after the stalled-job check; a job that kills every worker taking
 * it ends as a failed cell. The quick bad-input cases are in queue.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, evaluatorBlock, experimentFixture, minimalPageReply, readJson, TEST_MS, threeArmConfig, writeConfig } from "../support/experiment.ts";
import { filesUnder, type IwrProcess, startIwr, until } from "../support/iwr-processes.ts";
import { redisFixture } from "../support/redis-server.ts";

const fixture = experimentFixture("experiment-queue");
const redisServer = redisFixture();

const configBody = (out: string) => threeArmConfig({ ids: [1, 2], out, baseURL: fixture.server().baseURL });

/** Every value Redis holds, as text: what a queue keeps between machines. */
async function redisContents(url: string): Promise<string> {
  const client = new Redis(url);
  try {
    const parts: string[] = [];
    for (const key of await client.keys("*")) {
      const type = await client.type(key);
      if (type === "string") parts.push(String(await client.get(key)));
      else if (type === "hash") parts.push(JSON.stringify(await client.hgetall(key)));
      else if (type === "list") parts.push(...(await client.lrange(key, 0, -1)));
      else if (type === "set") parts.push(...(await client.smembers(key)));
      else if (type === "zset") parts.push(...(await client.zrange(key, "0", "-1")));
      else if (type === "stream") parts.push(JSON.stringify(await client.xrange(key, "-", "+")));
    }
    return parts.join("\n");
  } finally {
    client.disconnect();
  }
}

const scoresOf = (runDir: string) =>
  readJson(path.join(runDir, "report.json")).arms.map((arm: Record<string, unknown>) => ({
    name: arm.name,
    cells: arm.cells,
    failed: arm.failed,
    final: arm.final,
    ifs: arm.ifs,
    vfs: arm.vfs,
    tokens: Number(arm.inputTokens) + Number(arm.outputTokens),
  }));

describe("iwr run --queue with two workers", () => {
  it(
    "a worker killed (SIGKILL) mid-job: every cell finishes, the report equals the in-process run's, nothing finished was redone, no corrupt file",
    async () => {
      fixture.server().setReplyFunction(() => minimalPageReply("nothing here"));
      const base = path.join(fixture.dir(), "kill");
      process.env.IWR_CACHE_DIR = path.join(base, "cache-in-process");
      expect(await runIwrCapturing([], ["run", writeConfig(path.join(base, "in-process.yaml"), configBody("in-process"))])).toBe(0);
      const inProcessRequests = fixture.server().chatRequests().length;
      expect(inProcessRequests).toBe(2);
      fixture.server().requests.length = 0;

      const config = writeConfig(path.join(base, "queued.yaml"), configBody("queued"));
      const runDir = path.join(base, "queued");
      const secret = "sk-queue-test-5d41402abc4b2a76b9719d911017c592";
      const env = { ...process.env, IWR_CACHE_DIR: path.join(base, "cache-queued"), IWR_LOG_LEVEL: "warn", OPENAI_API_KEY: secret };
      const workerArgs = ["worker", "--queue", redisServer().url, "--generate", "1", "--evaluate", "1", "--stall-ms", "4000"];
      const doomed = startIwr(workerArgs, env);
      const survivor = startIwr(workerArgs, env);
      const coordinator = startIwr(["run", config, "--queue", redisServer().url], env);
      try {
        // Kill the first worker in the middle of an evaluation (started, not yet ended), once some cell is finished.
        const evaluationsUnderWay = () => {
          const started = doomed.lines.flatMap((line) => /^evaluate (.*): started$/.exec(line)?.[1] ?? []);
          const ended = new Set(doomed.lines.flatMap((line) => /^evaluate (.*?): (?!started$)/.exec(line)?.[1] ?? []));
          return started.filter((label) => !ended.has(label));
        };
        await until(
          "a finished cell and an evaluation under way in the first worker",
          () => filesUnder(runDir, "cell.json").length >= 1 && evaluationsUnderWay().length > 0 && doomed.child.exitCode === null,
        );
        const underWay = evaluationsUnderWay();
        doomed.child.kill("SIGKILL");
        expect(await doomed.exited).toBeNull();
        const finishedAtKill = new Map(filesUnder(runDir, "cell.json").map((name) => [name, fs.readFileSync(path.join(runDir, name), "utf8")]));
        const evalsAtKill = new Map(
          [...finishedAtKill.keys()].map((name) => [name, fs.readFileSync(path.join(runDir, path.dirname(name), "eval.json"), "utf8")]),
        );
        expect(finishedAtKill.size).toBeLessThan(6);
        expect(underWay).toHaveLength(1);

        expect(await coordinator.exited).toBe(0);
        expect(filesUnder(runDir, "cell.json")).toHaveLength(6);
        for (const name of filesUnder(runDir, "cell.json")) expect(readJson(path.join(runDir, name)).status, name).toBe("finished");
        // What had finished before the kill is the same bytes: not replayed, not rescored, not rewritten.
        for (const [name, text] of finishedAtKill) {
          expect(fs.readFileSync(path.join(runDir, name), "utf8")).toBe(text);
          expect(fs.readFileSync(path.join(runDir, path.dirname(name), "eval.json"), "utf8")).toBe(evalsAtKill.get(name));
        }
        // Replays: each cell's evaluation started once, except the one the kill cut short, which the survivor took up again.
        const evaluationStarts = [...doomed.lines, ...survivor.lines]
          .filter((line) => /^evaluate .*: started$/.test(line))
          .map((line) => line.replace(/^evaluate (.*): started$/, "$1"));
        expect(new Set(evaluationStarts).size).toBe(6);
        const repeated = evaluationStarts.filter((label, index) => evaluationStarts.indexOf(label) !== index);
        expect(repeated).toEqual(underWay);
        expect(survivor.lines.filter((line) => line === `evaluate ${underWay[0]}: started`)).toHaveLength(1);
        // Model requests: the in-process run's count, plus at most the one a generation cut short would resend.
        expect(fixture.server().chatRequests().length).toBeGreaterThanOrEqual(inProcessRequests);
        expect(fixture.server().chatRequests().length).toBeLessThanOrEqual(inProcessRequests + 1);
        for (const name of filesUnder(runDir, ".json")) expect(() => readJson(path.join(runDir, name)), name).not.toThrow();
        expect(scoresOf(runDir)).toEqual(scoresOf(path.join(base, "in-process")));
        expect(readJson(path.join(runDir, "run.json")).runKey).toMatch(/^[0-9a-f]{64}$/);
        // The key the workers' model client sent reached neither Redis nor the run folder.
        expect(
          fixture
            .server()
            .chatRequests()
            .every((request) => request.headers.authorization === `Bearer ${secret}`),
        ).toBe(true);
        const contents = await redisContents(redisServer().url);
        expect(contents).toContain(readJson(path.join(runDir, "run.json")).runKey);
        expect(contents).not.toContain(secret);
        for (const name of fs.readdirSync(runDir, { recursive: true, encoding: "utf8" }).filter((entry) => /\.(json|yaml|html|md)$/.test(entry))) {
          expect(fs.readFileSync(path.join(runDir, name), "utf8"), name).not.toContain(secret);
        }
      } finally {
        for (const process of [doomed, survivor, coordinator])
          if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGTERM");
      }
      expect(await survivor.exited).toBe(0);
    },
    TEST_MS,
  );
});

describe("iwr run --queue, a job that never finishes", () => {
  it(
    "a cell whose job kills every worker that takes it is recorded as failed with the queue's reason, and the run goes on",
    async () => {
      const base = path.join(fixture.dir(), "deadly");
      const runDir = path.join(base, "run");
      const blankRecord = path.join(runDir, "arms", "blank", "repeat-0", "1", "blank", "cell.json");
      // A generator that takes its worker down (once the other cell is done, so only this cell is hit).
      fs.mkdirSync(base, { recursive: true });
      fs.writeFileSync(
        path.join(base, "deadly.ts"),
        `import fs from "node:fs";
export async function generate() {
  while (!fs.existsSync(${JSON.stringify(blankRecord)})) await new Promise((resolve) => setTimeout(resolve, 100));
  process.kill(process.pid, "SIGKILL");
  await new Promise(() => undefined);
}
`,
      );
      const config = writeConfig(
        path.join(base, "config.yaml"),
        `tasks:\n  file: ${DATA}\n  ids: [1]\nout: run\n${evaluatorBlock}` +
          "arms:\n  - name: blank\n    kind: blank\n  - name: deadly\n    kind: module:deadly.ts\n",
      );
      const env = { ...process.env, IWR_CACHE_DIR: path.join(base, "cache"), IWR_LOG_LEVEL: "warn" };
      const coordinator = startIwr(["run", config, "--queue", redisServer().url], env);
      let deaths = 0;
      let worker: IwrProcess | undefined;
      try {
        // Workers come back as a supervisor would restart them, until the coordinator is done.
        while (coordinator.child.exitCode === null && deaths < 6) {
          worker = startIwr(["worker", "--queue", redisServer().url, "--stall-ms", "2000"], env);
          const ended = await Promise.race([worker.exited.then(() => "died"), coordinator.exited.then(() => "done")]);
          if (ended === "done") break;
          deaths += 1;
        }
        expect(await coordinator.exited, coordinator.lines.join("\n")).toBe(1);
        // BullMQ's stalled-job check took the job up twice; the third death failed it.
        expect(deaths).toBe(3);
        expect(readJson(blankRecord).status).toBe("finished");
        const deadly = readJson(path.join(runDir, "arms", "deadly", "repeat-0", "1", "module", "cell.json"));
        expect(deadly).toMatchObject({ status: "failed", error: { stage: "generate", code: "QUEUE" } });
        expect(deadly.error.message).toMatch(/the generate job failed .*stalled more than allowable limit/);
        expect(coordinator.lines.join("\n")).toMatch(/1 cell\(s\) failed/);
        expect(readJson(path.join(runDir, "report.json")).arms.find((arm: { name: string }) => arm.name === "deadly")).toMatchObject({ failed: 1 });
      } finally {
        if (worker && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGTERM");
        if (coordinator.child.exitCode === null) coordinator.child.kill("SIGKILL");
      }
    },
    TEST_MS,
  );
});
