/**
 * Queue mode with real parts: a real redis-server on 127.0.0.1, a coordinator
 * (`iwr run --queue`) and two worker processes (`iwr worker`), real Chromium, and a local
 * OpenAI-compatible server answering from a script (a fixture). One worker is killed
 * (SIGKILL) in the middle of an evaluation; the other takes its job up after the stalled-job
 * check. Also: an unreachable Redis fails at once, and a worker that does not see the
 * coordinator's run folder refuses jobs without writing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisOptionsOf } from "../../src/run/queue/connection.ts";
import { GENERATE_QUEUE } from "../../src/run/queue/jobs.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, TEST_MS, evaluatorBlock, experimentFixture, minimalPageReply, readJson, writeConfig } from "../support/experiment.ts";
import { freePort, startRedisServer, type RedisServer } from "../support/redis-server.ts";

const fixture = experimentFixture("experiment-queue");
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

interface Process {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

function startIwr(args: string[], env: NodeJS.ProcessEnv): Process {
  const child = spawn(process.execPath, ["bin/iwr.js", "--quiet", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean));
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  return { child, lines, exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))) };
}

const until = async (what: string, condition: () => boolean, ms = 120_000) => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const configBody = (out: string) => `tasks:
  file: ${DATA}
  ids: [1, 2]
out: ${out}
${evaluatorBlock}arms:
  - name: blank
    kind: blank
  - name: single
    kind: single-pass
    model: gpt-4o
    baseURL: ${fixture.server().baseURL}
  - name: frozen
    kind: mutant:freeze-after:0
`;

const filesUnder = (dir: string, suffix: string) => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(suffix)) : []);
const scoresOf = (runDir: string) =>
  readJson(path.join(runDir, "report.json")).arms.map((arm: Record<string, unknown>) => ({ name: arm.name, cells: arm.cells, failed: arm.failed, final: arm.final, ifs: arm.ifs, vfs: arm.vfs, tokens: Number(arm.inputTokens) + Number(arm.outputTokens) }));

describe("iwr run --queue with two workers", () => {
  it("a worker killed (SIGKILL) mid-job: every cell finishes, the report equals the in-process run's, nothing finished was redone, no corrupt file", async () => {
    fixture.server().setReplyFunction(() => minimalPageReply("nothing here"));
    const base = path.join(fixture.dir(), "kill");
    process.env.IWR_CACHE_DIR = path.join(base, "cache-in-process");
    expect(await runIwrCapturing([], ["run", writeConfig(path.join(base, "in-process.yaml"), configBody("in-process"))])).toBe(0);
    const inProcessRequests = fixture.server().chatRequests().length;
    expect(inProcessRequests).toBe(2);
    fixture.server().requests.length = 0;

    const config = writeConfig(path.join(base, "queued.yaml"), configBody("queued"));
    const runDir = path.join(base, "queued");
    const env = { ...process.env, IWR_CACHE_DIR: path.join(base, "cache-queued"), IWR_LOG_LEVEL: "warn" };
    const workerArgs = ["worker", "--queue", redis.url, "--generate", "1", "--evaluate", "1", "--stall-ms", "4000"];
    const doomed = startIwr(workerArgs, env);
    const survivor = startIwr(workerArgs, env);
    const coordinator = startIwr(["run", config, "--queue", redis.url], env);
    try {
      // Kill the first worker as soon as it starts an evaluation, once some cell is finished.
      await until("a finished cell and an evaluation under way in the first worker", () => filesUnder(runDir, "cell.json").length >= 1 && doomed.lines.some((line) => /^evaluate .*: started$/.test(line)) && doomed.child.exitCode === null);
      const startedBeforeKill = doomed.lines.filter((line) => /: started$/.test(line)).length;
      const underWay = doomed.lines.filter((line) => /^evaluate .*: started$/.test(line)).map((line) => line.replace(/^evaluate (.*): started$/, "$1"));
      doomed.child.kill("SIGKILL");
      expect(await doomed.exited).toBeNull();
      const finishedAtKill = new Map(filesUnder(runDir, "cell.json").map((name) => [name, fs.readFileSync(path.join(runDir, name), "utf8")]));
      const evalsAtKill = new Map([...finishedAtKill.keys()].map((name) => [name, fs.readFileSync(path.join(runDir, path.dirname(name), "eval.json"), "utf8")]));
      expect(finishedAtKill.size).toBeLessThan(6);
      expect(startedBeforeKill).toBeGreaterThan(0);

      expect(await coordinator.exited).toBe(0);
      expect(filesUnder(runDir, "cell.json")).toHaveLength(6);
      for (const name of filesUnder(runDir, "cell.json")) expect(readJson(path.join(runDir, name)).status, name).toBe("finished");
      // What had finished before the kill is the same bytes: not replayed, not rescored, not rewritten.
      for (const [name, text] of finishedAtKill) {
        expect(fs.readFileSync(path.join(runDir, name), "utf8")).toBe(text);
        expect(fs.readFileSync(path.join(runDir, path.dirname(name), "eval.json"), "utf8")).toBe(evalsAtKill.get(name));
      }
      // Replays: each cell's evaluation started once, except the one cut short by the kill (taken up again by the survivor).
      const evaluationStarts = [...doomed.lines, ...survivor.lines].filter((line) => /^evaluate .*: started$/.test(line)).map((line) => line.replace(/^evaluate (.*): started$/, "$1"));
      expect(new Set(evaluationStarts).size).toBe(6);
      const repeated = evaluationStarts.filter((label, index) => evaluationStarts.indexOf(label) !== index);
      for (const label of repeated) expect(underWay).toContain(label);
      expect(repeated.length).toBeLessThanOrEqual(1);
      // Model requests: the in-process run's count, plus at most the one a generation cut short would resend.
      expect(fixture.server().chatRequests().length).toBeGreaterThanOrEqual(inProcessRequests);
      expect(fixture.server().chatRequests().length).toBeLessThanOrEqual(inProcessRequests + 1);
      for (const name of filesUnder(runDir, ".json")) expect(() => readJson(path.join(runDir, name)), name).not.toThrow();
      expect(scoresOf(runDir)).toEqual(scoresOf(path.join(base, "in-process")));
      expect(readJson(path.join(runDir, "run.json")).runKey).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      for (const process of [doomed, survivor, coordinator]) if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGTERM");
    }
    expect(await survivor.exited).toBe(0);
  }, TEST_MS);
});

describe("iwr run --queue, a job that never finishes", () => {
  it("a cell whose job kills every worker that takes it is recorded as failed with the queue's reason, and the run goes on", async () => {
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
    const config = writeConfig(path.join(base, "config.yaml"), `tasks:\n  file: ${DATA}\n  ids: [1]\nout: run\n${evaluatorBlock}arms:\n  - name: blank\n    kind: blank\n  - name: deadly\n    kind: module:deadly.ts\n`);
    const env = { ...process.env, IWR_CACHE_DIR: path.join(base, "cache"), IWR_LOG_LEVEL: "warn" };
    const coordinator = startIwr(["run", config, "--queue", redis.url], env);
    let deaths = 0;
    let worker: Process | undefined;
    try {
      // Workers come back as a supervisor would restart them, until the coordinator is done.
      while (coordinator.child.exitCode === null && deaths < 6) {
        worker = startIwr(["worker", "--queue", redis.url, "--stall-ms", "2000"], env);
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
  }, TEST_MS);
});

describe("queue mode, bad input", () => {
  it("an unreachable Redis URL fails at once with a clear message, for the coordinator and for a worker", async () => {
    const port = await freePort();
    const config = writeConfig(path.join(fixture.dir(), "unreachable", "config.yaml"), `tasks:\n  file: ${DATA}\n  ids: [1]\nout: run\narms:\n  - name: blank\n    kind: blank\n`);
    for (const args of [["run", config, "--queue", `redis://127.0.0.1:${port}`], ["worker", "--queue", `redis://:secret-word@127.0.0.1:${port}`]]) {
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

  it("a worker that does not see the coordinator's run folder (another run.json there) refuses the job, writes nothing and stops", async () => {
    const base = path.join(fixture.dir(), "mismatch");
    const config = writeConfig(path.join(base, "config.yaml"), `tasks:\n  file: ${DATA}\n  ids: [1]\nout: run\n${evaluatorBlock}arms:\n  - name: blank\n    kind: blank\n`);
    const runDir = path.join(base, "run");
    const env = { ...process.env, IWR_CACHE_DIR: path.join(base, "cache"), IWR_LOG_LEVEL: "warn" };
    const coordinator = startIwr(["run", config, "--queue", redis.url], env);
    try {
      await until("the coordinator to queue its cell", () => coordinator.lines.some((line) => line.startsWith("queued 1 cell(s)")));
      // As if another folder were mounted at the run folder's path on the worker's machine.
      const record = readJson(path.join(runDir, "run.json"));
      fs.writeFileSync(path.join(runDir, "run.json"), JSON.stringify({ ...record, runKey: "f".repeat(64) }));
      const worker = startIwr(["worker", "--queue", redis.url], env);
      expect(await worker.exited).toBe(2);
      expect(worker.lines.join("\n")).toMatch(/refused task 1 × blank r0: .*run\.json on this machine has run key f{16}, the coordinator's is [0-9a-f]{16}: this is not the coordinator's run folder; nothing was written/);
      expect(filesUnder(runDir, "cell.json")).toEqual([]);
      expect(filesUnder(runDir, "eval.json")).toEqual([]);
      // The job is back in the queue, no attempt used, for a worker that sees the right folder.
      const queue = new Queue(GENERATE_QUEUE, { connection: redisOptionsOf(redis.url) });
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
  }, TEST_MS);
});
