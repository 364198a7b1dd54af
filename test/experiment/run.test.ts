/**
 * `iwr run` end to end: a small config (two bundled tasks; every arm kind) against a
 * local OpenAI-compatible server answering from a script (a fixture: what it answers is
 * chosen here, never presented as a result), real Chromium, real OCR. Then the report's
 * numbers against the eval.json files, report.html opened in Chromium, a SIGKILL midway
 * and its resume, and malformed configs refused before any work.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { launchBrowser } from "../../src/browser/launch.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { referencePagePath } from "../../src/run/calibration.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import { ASSET_PLACEHOLDER, type Task } from "../../src/tasks/schema.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, storyboardReply } from "../support/agent-scripts.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";
import { startOpenAIServer, type FakeOpenAIServer } from "../support/openai-server.ts";

const TASK_IDS = [1, 2];
const DATA = path.resolve("tasks/iwr-mini.jsonl");
const TEST_MS = 420_000;
let dir: string;
let server: FakeOpenAIServer;
let tasks: Task[];
const savedCacheDir = process.env.IWR_CACHE_DIR;

beforeAll(async () => {
  dir = tempDir("experiment");
  // A cache of this test's own: answers cached by an earlier test run must not stand in for requests counted here.
  process.env.IWR_CACHE_DIR = path.join(dir, "cache");
  tasks = (await loadTasks(DATA)).filter((task) => TASK_IDS.includes(task.id));
  server = await startOpenAIServer({ models: ["gpt-4o"] });
});
afterAll(async () => {
  if (savedCacheDir === undefined) delete process.env.IWR_CACHE_DIR;
  else process.env.IWR_CACHE_DIR = savedCacheDir;
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  server.requests.length = 0;
  server.setReplyFunction(undefined);
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

const first = () => tasks[0]!;
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"));

/** A results folder laid out as the Python harness leaves it: `<dir>/<id>/<model-dir>/index.html`, assets linked from elsewhere. */
function harnessResults(root: string): string {
  for (const task of tasks) {
    const pageDir = path.join(root, String(task.id), "some-model");
    fs.mkdirSync(pageDir, { recursive: true });
    // The harness resolves the placeholder against its own data folder, not ours.
    const html = fs.readFileSync(referencePagePath(task), "utf8").split(ASSET_PLACEHOLDER).join(`../../../data/${task.id}/assets`);
    fs.writeFileSync(path.join(pageDir, "index.html"), html);
    fs.writeFileSync(path.join(pageDir, "eval.json"), "{\"the harness's own\": true}");
  }
  return root;
}

function writeConfig(file: string, body: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, body);
  return file;
}

const evaluatorBlock = "evaluator:\n  profile: offline\n";
const minimalPageReply = (text: string) => `\`\`\`html\n<!doctype html><html><body><h1>${text}</h1></body></html>\n\`\`\``;

describe("iwr run", () => {
  it("runs every arm kind on two tasks; report.json agrees with the eval.json files; report.html renders offline with one image row per evaluated step", async () => {
    // Model answers are small pages that fail early (what they score is not the point here, and
    // they keep the replays short); the agent's revision differs from its draft, so two drafts are scored.
    const model = scriptedAgentModel({
      generate: [minimalPageReply("single pass")],
      analyze: [storyboardReply(first().line.action_sequence.map(replayActionOf))],
      draft: [minimalPageReply("first draft")],
      critique: [CRITIQUE_REPLY],
      revise: [minimalPageReply("revised draft")],
    });
    server.setReplyFunction(model.reply);
    const results = harnessResults(path.join(dir, "harness"));
    const config = writeConfig(
      path.join(dir, "configs", "all-arms.yaml"),
      `name: all-arms
tasks:
  file: ${DATA}
  ids: [${TASK_IDS.join(", ")}]
out: ../runs/all-arms
${evaluatorBlock}report:
  compare: [agent, single]
arms:
  - name: single
    kind: single-pass
    model: gpt-4o
    baseURL: ${server.baseURL}
  - name: agent
    kind: agent
    model: gpt-4o
    baseURL: ${server.baseURL}
    agent: { maxIterations: 1, replay: false }
  - name: reference
    kind: reference
  - name: blank
    kind: blank
  - name: frozen
    kind: mutant:no-script
  - name: assets
    kind: module:${path.resolve("agents/assets-baseline/index.ts")}
  - name: harness
    kind: results:${results}
    model: some-model
`,
    );
    const output: string[] = [];
    const code = await runIwrCapturing(output, ["run", config], { quiet: false });
    expect(code, output.join("\n")).toBe(0);
    const runDir = path.join(dir, "runs", "all-arms");
    const report = readJson(path.join(runDir, "report.json"));
    const arms = ["single", "agent", "reference", "blank", "frozen", "assets", "harness"];
    expect(report.arms.map((arm: { name: string }) => arm.name)).toEqual(arms);
    expect(report.cells).toHaveLength(arms.length * TASK_IDS.length);

    // Every arm's mean Final is the mean of its eval.json files.
    const cellDirs = (arm: string) => {
      const armDir = path.join(runDir, "arms", arm, "repeat-0");
      return TASK_IDS.map((id) => {
        const [folder] = fs.readdirSync(path.join(armDir, String(id)));
        return path.join(armDir, String(id), folder!);
      });
    };
    for (const arm of arms) {
      const finals = cellDirs(arm).map((cellDir) => readJson(path.join(cellDir, "eval.json")).scores.final as number);
      const summary = report.arms.find((entry: { name: string }) => entry.name === arm);
      expect(summary.final, arm).toBeCloseTo(finals.reduce((a, b) => a + b, 0) / finals.length, 10);
      expect(summary.coverage, arm).toBe(1);
    }
    const finalOf = (arm: string) => report.arms.find((entry: { name: string }) => entry.name === arm).final as number;
    expect(finalOf("reference")).toBeGreaterThan(0.9);
    expect(finalOf("blank")).toBeLessThan(0.2);
    expect(finalOf("frozen")).toBeLessThan(finalOf("reference"));
    // The harness's pages are the true pages with their links from another folder: rebased, they score as the reference does.
    for (const cellDir of cellDirs("harness")) expect(readJson(path.join(cellDir, "source.json")).assetLinksRebased).toBeGreaterThan(0);
    expect(finalOf("harness")).toBeCloseTo(finalOf("reference"), 1);
    expect(readJson(path.join(results, String(first().id), "some-model", "eval.json"))).toEqual({ "the harness's own": true });
    // Model arms cost tokens; the paired comparison covers both tasks; the agent's drafts were scored by round.
    expect(report.arms.find((entry: { name: string }) => entry.name === "single").costUsd).toBeGreaterThan(0);
    expect(report.comparison).toMatchObject({ a: "agent", b: "single", tasks: 2 });
    expect(report.comparison.ci95[0]).toBeLessThanOrEqual(report.comparison.meanDifference);
    expect(report.comparison.ci95[1]).toBeGreaterThanOrEqual(report.comparison.meanDifference);
    const curve = report.curves.find((entry: { arm: string }) => entry.arm === "agent");
    expect(curve.rounds.map((round: { round: number }) => round.round)).toEqual([0, 1]);
    expect(curve.points.every((point: { final?: number }) => typeof point.final === "number")).toBe(true);
    // The reproducibility record.
    const record = readJson(path.join(runDir, "run.json"));
    expect(record.config.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(record.tools.chromium).not.toBe("unknown");
    expect(Object.keys(record.promptHashes)).toEqual(expect.arrayContaining(["generate", "analyze", "judge-assertion"]));

    // report.html: no console error, no request beyond the file itself, one image row per evaluated step.
    const evaluatedSteps = TASK_IDS.map((id) => new Set(report.cells.filter((cell: { taskId: number; repeat: number }) => cell.taskId === id && cell.repeat === 0).flatMap((cell: { steps: Array<{ position: number }> }) => cell.steps.map((step) => step.position))).size).reduce((a, b) => a + b, 0);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      page.on("console", (message) => void (message.type() === "error" && errors.push(message.text())));
      page.on("pageerror", (error) => void errors.push(error.message));
      page.on("request", (request) => void requests.push(request.url()));
      await page.goto(`file://${path.join(runDir, "report.html")}`);
      expect(errors).toEqual([]);
      expect(requests.filter((url) => !url.startsWith("data:"))).toEqual([`file://${path.join(runDir, "report.html")}`]);
      expect(await page.locator("[data-step-row]").count()).toBe(evaluatedSteps);
      const images = await page.locator("[data-step-row] img").evaluateAll((nodes) => nodes.map((node) => (node as HTMLImageElement).naturalWidth));
      expect(images.length).toBeGreaterThan(evaluatedSteps);
      expect(images.every((width) => width > 0)).toBe(true);
    } finally {
      await browser.close();
    }

    // A warm rerun: no model request, every cell skipped.
    server.requests.length = 0;
    const again: string[] = [];
    expect(await runIwrCapturing(again, ["run", config], { quiet: false })).toBe(0);
    expect(server.chatRequests()).toHaveLength(0);
    expect(again.join("\n")).toContain(`${arms.length * TASK_IDS.length} finished already`);
  }, TEST_MS);

  it("killed (SIGKILL) midway and run again: the same report, nothing finished redone, no corrupt file", async () => {
    // Pages that fail at the first step keep this test short: what it checks is the bookkeeping.
    server.setReplyFunction(() => minimalPageReply("nothing here"));
    const KILL_TASK = TASK_IDS[1]!;
    const body = (out: string) => `tasks:
  file: ${DATA}
  ids: [${KILL_TASK}]
out: ${out}
${evaluatorBlock}  judgeRepeats: 2
arms:
  - name: blank
    kind: blank
  - name: single
    kind: single-pass
    model: gpt-4o
    baseURL: ${server.baseURL}
  - name: frozen
    kind: mutant:freeze-after:0
`;
    const cache = (name: string) => path.join(dir, "kill", `cache-${name}`);
    process.env.IWR_CACHE_DIR = cache("whole");
    const whole = writeConfig(path.join(dir, "kill", "whole.yaml"), body("whole"));
    expect(await runIwrCapturing([], ["run", whole])).toBe(0);
    process.env.IWR_CACHE_DIR = path.join(dir, "cache");
    const wholeRequests = server.chatRequests().length;
    expect(wholeRequests).toBe(1);
    vi.restoreAllMocks();
    server.requests.length = 0;

    // The same experiment in another folder, with its own cache, killed once its first cell is finished.
    const config = writeConfig(path.join(dir, "kill", "killed.yaml"), body("killed"));
    const runDir = path.join(dir, "kill", "killed");
    const cellFiles = () => (fs.existsSync(runDir) ? fs.readdirSync(runDir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith("cell.json")) : []);
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
    expect(server.chatRequests().length).toBe(wholeRequests);
    // Every JSON file parses; the report equals the uninterrupted run's.
    for (const name of fs.readdirSync(runDir, { recursive: true, encoding: "utf8" }).filter((entry) => entry.endsWith(".json"))) {
      expect(() => readJson(path.join(runDir, name)), name).not.toThrow();
    }
    const scoresOf = (folder: string) =>
      readJson(path.join(dir, "kill", folder, "report.json")).arms.map((arm: Record<string, unknown>) => ({ name: arm.name, final: arm.final, ifs: arm.ifs, vfs: arm.vfs, tokens: Number(arm.inputTokens) + Number(arm.outputTokens) }));
    expect(scoresOf("killed")).toEqual(scoresOf("whole"));
    // Each assertion was judged twice; the (deterministic) offline judge never disagreed with itself.
    const noise = readJson(path.join(dir, "kill", "whole", "report.json")).judgeNoise;
    expect(noise.repeats).toBe(2);
    expect(noise.perArm.every((arm: { disagreeing: number; finalSdFromJudge: number }) => arm.disagreeing === 0 && arm.finalSdFromJudge === 0)).toBe(true);
  }, TEST_MS);
  it("stopped by SIGINT: no new cell starts, none is recorded as failed, the exit code says unfinished, and a rerun completes", async () => {
    server.setReplyFunction(() => minimalPageReply("nothing here"));
    const config = writeConfig(
      path.join(dir, "sigint", "config.yaml"),
      `tasks:
  file: ${DATA}
  ids: [${TASK_IDS.join(", ")}]
out: run
${evaluatorBlock}arms:
  - name: blank
    kind: blank
  - name: single
    kind: single-pass
    model: gpt-4o
    baseURL: ${server.baseURL}
`,
    );
    const runDir = path.join(dir, "sigint", "run");
    const records = () =>
      fs.existsSync(runDir) ? fs.readdirSync(runDir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith("cell.json")).map((name) => readJson(path.join(runDir, name))) : [];
    const env = { ...process.env, IWR_CACHE_DIR: path.join(dir, "sigint", "cache") };
    const child = spawn(process.execPath, ["bin/iwr.js", "run", config], { env, stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    child.stdout.on("data", (chunk: Buffer) => void (printed += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => void (printed += chunk.toString()));
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
  }, TEST_MS);
});

describe("a malformed config", () => {
  const cases: Array<{ name: string; arms: string; tasks?: string; expected: RegExp }> = [
    { name: "an unknown arm kind", arms: "  - name: a\n    kind: telepathy\n", expected: /bad\.yaml:\d+:\d+: arms\[0\]\.kind: unknown arm kind 'telepathy'/ },
    { name: "a model arm without a model", arms: "  - name: a\n    kind: single-pass\n", expected: /bad\.yaml:\d+:\d+: arms\[0\]: a single-pass arm needs a model/ },
    { name: "a bad filter", arms: "  - name: a\n    kind: blank\n", tasks: "  interaction: [L9]\n", expected: /bad\.yaml:\d+:\d+: tasks\.interaction\[0\]:/ },
    { name: "unknown task ids", arms: "  - name: a\n    kind: blank\n", tasks: "  ids: [99]\n", expected: /bad\.yaml:\d+:\d+: tasks\.ids: task\(s\) 99 are not in/ },
    { name: "a module that exports no generator", arms: "  - name: a\n    kind: module:not-a-generator.ts\n", expected: /bad\.yaml:\d+:\d+: arms\[0\]\.kind: module .*not-a-generator\.ts exports no generator: .*it exports answer/ },
  ];
  for (const { name, arms, tasks: taskLines, expected } of cases) {
    it(`fails before any work with file, line and key: ${name}`, async () => {
      const folder = path.join(dir, "bad", name.replace(/\W+/g, "-"));
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
