/**
 * `iwr run` interrupted and malformed: a SIGKILL midway and its resume (the same report,
 * nothing finished redone), a SIGINT stop, and configs refused before any work with
 * file, line and key. The model is a local OpenAI-compatible server answering from a
 * script (a fixture), the browser real Chromium.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, experimentFixture, minimalPageReply, readJson, TEST_MS, threeArmConfig, writeConfig } from "../support/experiment.ts";

const TASK_IDS = [1, 2];
const fixture = experimentFixture("experiment-resume");

describe("iwr run, interrupted", () => {
  it(
    "killed (SIGKILL) midway and run again: the same report, nothing finished redone, no corrupt file",
    async () => {
      // Pages that fail at the first step keep this test short: what it checks is the bookkeeping.
      fixture.server().setReplyFunction(() => minimalPageReply("nothing here"));
      const KILL_TASK = TASK_IDS[1]!;
      const body = (out: string) => threeArmConfig({ ids: [KILL_TASK], out, baseURL: fixture.server().baseURL });
      const cache = (name: string) => path.join(fixture.dir(), "kill", `cache-${name}`);
      process.env.IWR_CACHE_DIR = cache("whole");
      const whole = writeConfig(path.join(fixture.dir(), "kill", "whole.yaml"), body("whole"));
      expect(await runIwrCapturing([], ["run", whole])).toBe(0);
      process.env.IWR_CACHE_DIR = path.join(fixture.dir(), "cache");
      const wholeRequests = fixture.server().chatRequests().length;
      expect(wholeRequests).toBe(1);
      vi.restoreAllMocks();
      fixture.server().requests.length = 0;

      // The same experiment in another folder, with its own cache, killed once its first cell is finished.
      const config = writeConfig(path.join(fixture.dir(), "kill", "killed.yaml"), body("killed"));
      const runDir = path.join(fixture.dir(), "kill", "killed");
      const cellFiles = () =>
        fs.existsSync(runDir) ? fs.readdirSync(runDir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith("cell.json")) : [];
      const env = { ...process.env, IWR_CACHE_DIR: cache("killed"), IWR_LOG_LEVEL: "warn" };
      const child = spawn(process.execPath, ["bin/iwr.js", "--quiet", "run", config], { env, stdio: "ignore" });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      while (cellFiles().length < 1) {
        if (child.exitCode !== null) throw new Error(`the run ended (code ${child.exitCode}) before it could be killed`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      child.kill("SIGKILL");
      expect(await exited).toBeNull();
      const before = new Map(cellFiles().map((name) => [name, fs.readFileSync(path.join(runDir, name), "utf8")]));
      expect(before.size).toBeLessThan(3);
      const evalsBefore = new Map([...before.keys()].map((name) => [name, fs.readFileSync(path.join(runDir, path.dirname(name), "eval.json"), "utf8")]));

      const resumed = spawn(process.execPath, ["bin/iwr.js", "--quiet", "run", config], { env, stdio: "ignore" });
      expect(await new Promise((resolve) => resumed.on("exit", resolve))).toBe(0);
      // What had finished is untouched: its cell.json and eval.json are the same bytes (no replay, no rescoring).
      for (const [name, text] of before) {
        expect(fs.readFileSync(path.join(runDir, name), "utf8")).toBe(text);
        expect(fs.readFileSync(path.join(runDir, path.dirname(name), "eval.json"), "utf8")).toBe(evalsBefore.get(name));
      }
      expect(cellFiles()).toHaveLength(3);
      // No model request was sent twice across the killed run and its resume.
      expect(fixture.server().chatRequests().length).toBe(wholeRequests);
      // Every JSON file parses; the report equals the uninterrupted run's.
      for (const name of fs.readdirSync(runDir, { recursive: true, encoding: "utf8" }).filter((entry) => entry.endsWith(".json"))) {
        expect(() => readJson(path.join(runDir, name)), name).not.toThrow();
      }
      const scoresOf = (folder: string) =>
        readJson(path.join(fixture.dir(), "kill", folder, "report.json")).arms.map((arm: Record<string, unknown>) => ({
          name: arm.name,
          final: arm.final,
          ifs: arm.ifs,
          vfs: arm.vfs,
          tokens: Number(arm.inputTokens) + Number(arm.outputTokens),
        }));
      expect(scoresOf("killed")).toEqual(scoresOf("whole"));
    },
    TEST_MS,
  );
  it(
    "stopped by SIGINT: no new cell starts, none is recorded as failed, the exit code says unfinished, and a rerun completes",
    async () => {
      fixture.server().setReplyFunction(() => minimalPageReply("nothing here"));
      const config = writeConfig(
        path.join(fixture.dir(), "sigint", "config.yaml"),
        threeArmConfig({ ids: TASK_IDS, out: "run", baseURL: fixture.server().baseURL, frozen: false }),
      );
      const runDir = path.join(fixture.dir(), "sigint", "run");
      const records = () =>
        fs.existsSync(runDir)
          ? fs
              .readdirSync(runDir, { recursive: true, encoding: "utf8" })
              .filter((name) => name.endsWith("cell.json"))
              .map((name) => readJson(path.join(runDir, name)))
          : [];
      const env = { ...process.env, IWR_CACHE_DIR: path.join(fixture.dir(), "sigint", "cache") };
      const child = spawn(process.execPath, ["bin/iwr.js", "run", config], { env, stdio: ["ignore", "pipe", "pipe"] });
      let printed = "";
      const keep = (chunk: Buffer) => {
        printed += chunk.toString();
      };
      child.stdout.on("data", keep);
      child.stderr.on("data", keep);
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      while (records().length < 1) {
        if (child.exitCode !== null) throw new Error(`the run ended (code ${child.exitCode}) before it could be stopped`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      child.kill("SIGINT");
      const code = await exited;
      expect(printed).toContain("SIGINT: stopping");
      const done = records();
      expect(done.every((record: { status: string }) => record.status === "finished")).toBe(true);
      if (done.length < 2 * TASK_IDS.length) {
        expect(code).toBe(1);
        expect(printed).toMatch(/cell\(s\) unfinished \(the run was stopped\)/);
      } else expect(code).toBe(0);
      const resumed = spawn(process.execPath, ["bin/iwr.js", "--quiet", "run", config], { env, stdio: "ignore" });
      expect(await new Promise((resolve) => resumed.on("exit", resolve))).toBe(0);
      expect(records()).toHaveLength(2 * TASK_IDS.length);
    },
    TEST_MS,
  );
});

describe("a malformed config", () => {
  const cases: Array<{ name: string; arms: string; tasks?: string; expected: RegExp }> = [
    { name: "an unknown arm kind", arms: "  - name: a\n    kind: telepathy\n", expected: /bad\.yaml:\d+:\d+: arms\[0\]\.kind: unknown arm kind 'telepathy'/ },
    {
      name: "a model arm without a model",
      arms: "  - name: a\n    kind: single-pass\n",
      expected: /bad\.yaml:\d+:\d+: arms\[0\]: a single-pass arm needs a model/,
    },
    { name: "a bad filter", arms: "  - name: a\n    kind: blank\n", tasks: "  interaction: [L9]\n", expected: /bad\.yaml:\d+:\d+: tasks\.interaction\[0\]:/ },
    {
      name: "unknown task ids",
      arms: "  - name: a\n    kind: blank\n",
      tasks: "  ids: [99]\n",
      expected: /bad\.yaml:\d+:\d+: tasks\.ids: task\(s\) 99 are not in/,
    },
    {
      name: "a module that exports no generator",
      arms: "  - name: a\n    kind: module:not-a-generator.ts\n",
      expected: /bad\.yaml:\d+:\d+: arms\[0\]\.kind: module .*not-a-generator\.ts exports no generator: .*it exports answer/,
    },
  ];
  for (const { name, arms, tasks: taskLines, expected } of cases) {
    it(`fails before any work with file, line and key: ${name}`, async () => {
      const folder = path.join(fixture.dir(), "bad", name.replace(/\W+/g, "-"));
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, "not-a-generator.ts"), "export const answer = 42;\n");
      const config = writeConfig(path.join(folder, "bad.yaml"), `tasks:\n  file: ${DATA}\n${taskLines ?? ""}out: run\narms:\n${arms}`);
      const output: string[] = [];
      const code = await runIwrCapturing(output, ["run", config]);
      expect(code).toBe(2);
      expect(output.join("\n")).toMatch(expected);
      expect(fs.existsSync(path.join(folder, "run"))).toBe(false);
    });
  }
});
