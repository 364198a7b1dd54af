/**
 * One run per folder, through the command line: while an `iwr run` or `iwr generate` (its
 * own process, held up by a model that never answers) works on a folder, a second command
 * on it exits 2 naming the first and writes nothing; once the first is killed, its stale
 * lock is taken over with a warning. And output folders that cannot be one are refused
 * before any work: empty, a file, the checkout or its source folders.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runIwrCapturing } from "../support/cli.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";
import { evaluatorBlock } from "../support/experiment.ts";
import { startIwr, until } from "../support/iwr-processes.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";
import { warningsInLog } from "../support/warnings.ts";

const DATA = path.resolve("tasks/iwr-mini.jsonl");
let dir: string;
let server: FakeOpenAIServer;

beforeAll(async () => {
  dir = tempDir("run-lock");
  server = await startOpenAIServer({ models: ["gpt-4o"], reply: () => ({ hang: true }) });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function iwr(...args: string[]): Promise<{ code: number; output: string }> {
  const output: string[] = [];
  const code = await runIwrCapturing(output, args);
  vi.restoreAllMocks();
  return { code, output: output.join("\n") };
}

const env = { ...process.env, IWR_CACHE_DIR: path.join(tempDir("run-lock-cache")), OPENAI_API_KEY: "" };

describe("two commands on one folder", () => {
  it("a second iwr run on a run folder in use exits 2 naming the first; after the first is killed, its lock is taken over", async () => {
    const runDir = path.join(dir, "run");
    const config = path.join(dir, "single.yaml");
    fs.writeFileSync(
      config,
      `tasks:\n  file: ${DATA}\n  ids: [1]\nout: ${runDir}\n${evaluatorBlock}` +
        `arms:\n  - name: single\n    kind: single-pass\n    model: gpt-4o\n    baseURL: ${server.baseURL}\n`,
    );
    const first = startIwr(["run", config], env);
    await until("the first run's model call", () => server.chatRequests().length > 0, 180_000);
    const recordBefore = fs.readFileSync(path.join(runDir, "run.json"), "utf8");

    const second = await iwr("run", config);
    expect(second.code).toBe(2);
    expect(second.output).toContain(`${runDir} (run folder) is in use by another run: pid ${first.child.pid} on host`);
    expect(second.output).toContain(`(iwr run ${config})`);
    expect(fs.readFileSync(path.join(runDir, "run.json"), "utf8")).toBe(recordBefore);

    first.child.kill("SIGKILL");
    await first.exited;
    expect(fs.existsSync(path.join(runDir, "run.lock"))).toBe(true);
    const blank = path.join(dir, "blank.yaml");
    fs.writeFileSync(blank, `tasks:\n  file: ${DATA}\n  ids: [1]\nout: ${runDir}\n${evaluatorBlock}arms:\n  - name: blank\n    kind: blank\n`);
    const logFile = path.join(dir, "takeover.jsonl");
    const third = await iwr("--log-file", logFile, "run", blank);
    expect(third.code).toBe(0);
    const warned = await warningsInLog(logFile);
    expect(warned.some((line) => line.includes("taking over the lock of a run that is no longer running") && line.includes(`pid ${first.child.pid}`))).toBe(
      true,
    );
    expect(fs.existsSync(path.join(runDir, "run.lock"))).toBe(false);
  }, 300_000);

  it("iwr generate holds its results folder for its model: a second generate and an evaluate of that model exit 2; another model's do not wait", async () => {
    server.requests.length = 0;
    const results = path.join(dir, "results");
    const generating = startIwr(["generate", "--data", DATA, "--ids", "1", "--result", results, "--model", "gpt-4o", "--base-url", server.baseURL], env);
    await until("the generation's model call", () => server.chatRequests().length > 0, 180_000);
    const again = await iwr("generate", "--data", DATA, "--ids", "1", "--result", results, "--model", "gpt-4o", "--base-url", server.baseURL);
    expect(again.code).toBe(2);
    expect(again.output).toContain(`(results folder of model gpt-4o) is in use by another run: pid ${generating.child.pid}`);
    expect(again.output).toContain("(iwr generate --model gpt-4o)");
    const scoring = await iwr(
      "evaluate",
      "--data",
      DATA,
      "--ids",
      "1",
      "--result",
      results,
      "--model",
      "gpt-4o",
      "--judge",
      "heuristic",
      "--grounding",
      "heuristic",
    );
    expect(scoring.code).toBe(2);
    expect(scoring.output).toContain(`pid ${generating.child.pid}`);
    // Another model's pages in the same folder: its own lock (nothing to score there, so it fails on its own terms, not on the lock).
    const other = await iwr(
      "evaluate",
      "--data",
      DATA,
      "--ids",
      "1",
      "--result",
      results,
      "--model",
      "other-model",
      "--judge",
      "heuristic",
      "--grounding",
      "heuristic",
    );
    expect(other.output).not.toContain("is in use by another run");
    generating.child.kill("SIGKILL");
    await generating.exited;
  }, 300_000);
});

describe("output folders that cannot be one", () => {
  it("are refused before any work, naming the flag or the config key", async () => {
    const config = path.join(dir, "outs.yaml");
    fs.writeFileSync(config, `tasks:\n  file: ${DATA}\n  ids: [1]\n${evaluatorBlock}arms:\n  - name: blank\n    kind: blank\n`);
    const cases: Array<{ args: string[]; expected: RegExp }> = [
      { args: ["run", config, "--out", "src/runs"], expected: /--out: 'src\/runs' is inside the project's src\/ folder/ },
      { args: ["run", config, "--out", "tasks"], expected: /--out: 'tasks' is inside the project's tasks\/ folder/ },
      { args: ["run", config, "--out", "."], expected: /--out: '\.' is the checkout itself/ },
      { args: ["run", config, "--out", ""], expected: /--out: it is empty/ },
      { args: ["run", config, "--out", "package.json"], expected: /--out: 'package\.json' is a file, not a folder/ },
      { args: ["generate", "--data", DATA, "--result", "package.json", "--model", "gpt-4o"], expected: /--result: 'package\.json' is a file, not a folder/ },
      { args: ["evaluate", "--data", DATA, "--result", "package.json", "--model", "gpt-4o"], expected: /--result: 'package\.json' is a file, not a folder/ },
      {
        args: ["agent", "--data", DATA, "--result", "agents/out", "--model", "gpt-4o"],
        expected: /--result: 'agents\/out' is inside the project's agents\/ folder/,
      },
      { args: ["merge", dir, "--out", "configs/merged"], expected: /--out: 'configs\/merged' is inside the project's configs\/ folder/ },
    ];
    for (const { args, expected } of cases) {
      const { code, output } = await iwr(...args);
      expect(code, args.join(" ")).toBe(2);
      expect(output, args.join(" ")).toMatch(expected);
    }
    const inConfig = path.join(dir, "out-in-src.yaml");
    fs.writeFileSync(inConfig, `tasks:\n  file: ${DATA}\nout: ${path.resolve("src/runs")}\n${evaluatorBlock}arms:\n  - name: blank\n    kind: blank\n`);
    const refused = await iwr("run", inConfig);
    expect(refused.code).toBe(2);
    expect(refused.output).toMatch(/out-in-src\.yaml:\d+:\d+: out: '.*src\/runs' is inside the project's src\/ folder/);
    expect(fs.existsSync("src/runs")).toBe(false);
  }, 120_000);
});
