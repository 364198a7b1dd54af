/**
 * The reconstruction agent end to end: the real graph, real Chromium self-checks, and a
 * local OpenAI-compatible server on 127.0.0.1 answering from a script (a fixture: the
 * scripted answers are chosen here). Requests are counted at the server.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { referencePageHtml } from "../../src/calibration/calibration.ts";
import { loadModelSpec } from "../../src/models/index.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { agentDirFor, agentFiles, candidateDirFor } from "../../src/results/layout.ts";
import { runAgentRun } from "../../src/run/agent.ts";
import { runGeneration } from "../../src/run/generate.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { CRITIQUE_REPLY, requestKind, scriptedAgentModel, scriptlessPageReply, storyboardReply, truePageReply } from "../support/agent-scripts.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { type FakeOpenAIServer, messageParts, startOpenAIServer } from "../support/openai-server.ts";

const TASK_ID = 4;
/** Each test runs the agent (and some the evaluator) with real Chromium on 2 cores shared with other test files. */
const AGENT_TEST_MS = 300_000;
const DATA = "tasks/iwr-mini.jsonl";
let dir: string;
let server: FakeOpenAIServer;
let task: Task;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-agent-"));
  task = (await loadTasks(DATA)).find((entry) => entry.id === TASK_ID)!;
  server = await startOpenAIServer({ models: ["gpt-4o"] });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  server.requests.length = 0;
  server.setReplyFunction(undefined);
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

const spec = (overrides = {}) => loadModelSpec("gpt-4o", { baseURL: server.baseURL, apiKeyEnv: "none", ...overrides });
const storyboard = () => storyboardReply(task.line.action_sequence.map(replayActionOf));
const kinds = () => server.chatRequests().map(requestKind);
const recordOf = (resultDir: string) => JSON.parse(fs.readFileSync(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).record, "utf8"));
const pageOf = (resultDir: string) => fs.readFileSync(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).page, "utf8");

async function finalScore(resultDir: string, model: string): Promise<number> {
  const code = await runIwrCapturing(
    [],
    ["evaluate", "--data", DATA, "--result", resultDir, "--model", model, "--ids", String(TASK_ID), "--judge", "heuristic", "--grounding", "heuristic"],
  );
  vi.restoreAllMocks();
  expect(code).toBe(0);
  return JSON.parse(fs.readFileSync(path.join(candidateDirFor(resultDir, TASK_ID, model), "eval.json"), "utf8")).scores.final;
}

describe("the agent keeps the best draft", () => {
  it(
    "keeps an improvement, and the evaluator scores it above the same model's single pass",
    async () => {
      const model = scriptedAgentModel({
        generate: [scriptlessPageReply(task)],
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "improve");
      const [result] = await runAgentRun({ tasks: [task], resultDir, drafter: spec(), settings: { maxIterations: 1 }, cacheMode: "off" });
      expect(result).toMatchObject({ status: "finished", stopReason: "max-iterations" });
      expect(kinds()).toEqual(["analyze", "draft", "critique", "revise"]);
      const record = recordOf(resultDir);
      expect(record.drafts.map((draft: { origin: string; parent?: number }) => [draft.origin, draft.parent])).toEqual([
        ["draft", undefined],
        ["revise", 0],
      ]);
      expect(record.bestDraft).toBe(1);
      expect(record.drafts[1].selfScore).toBeGreaterThan(record.drafts[0].selfScore + 0.3);
      expect(record.selfScoreByRound).toEqual([record.drafts[0].selfScore, record.drafts[1].selfScore]);
      expect(pageOf(resultDir)).toContain("<script");
      // The critique saw the worst pairs only: far fewer images than the video's frames.
      const [, draftRequest, critiqueRequest, reviseRequest] = server.chatRequests();
      const images = (request: typeof draftRequest) => messageParts(request!).filter((part) => part.type === "image_url").length;
      expect(images(critiqueRequest) + images(reviseRequest)).toBeLessThanOrEqual(images(draftRequest) / 2);
      expect(record.usageByNode.critique.images).toBe(images(critiqueRequest));
      expect(record.checkpoint.largestBytes).toBeLessThan(64 * 1024);

      await runGeneration({ tasks: [task.inputs], resultDir, spec: spec(), cacheMode: "off" });
      const [singlePass, agent] = [await finalScore(resultDir, "gpt-4o"), await finalScore(resultDir, "gpt-4o@agent")];
      expect(agent).toBeGreaterThan(singlePass + 0.2);
    },
    AGENT_TEST_MS,
  );

  it(
    "refuses a regression: a full first draft and a broken revision leave the first draft",
    async () => {
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [truePageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [scriptlessPageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "regress");
      const [result] = await runAgentRun({ tasks: [task], resultDir, drafter: spec(), settings: { maxIterations: 3, patience: 1 }, cacheMode: "off" });
      expect(result).toMatchObject({ status: "finished", stopReason: "no-improvement" });
      const record = recordOf(resultDir);
      expect(record.drafts).toHaveLength(2);
      expect(record.bestDraft).toBe(0);
      expect(record.drafts[1].selfScore).toBeLessThan(record.drafts[0].selfScore);
      // The first draft was the true page: the final page is it, its asset links resolved for the agent's folder.
      expect(pageOf(resultDir)).toBe(referencePageHtml(task, agentDirFor(resultDir, TASK_ID, "gpt-4o")));
    },
    AGENT_TEST_MS,
  );

  it(
    "breadth 3: the right draft of three is selected, the three self-checks run at once",
    async () => {
      // The three requests are identical (the sample index is only in the cache key): answers go by arrival.
      const model = scriptedAgentModel({ analyze: [storyboard()], draft: [scriptlessPageReply(task), truePageReply(task), scriptlessPageReply(task)] });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "breadth");
      const [result] = await runAgentRun({
        tasks: [task],
        resultDir,
        drafter: spec({ temperature: 0.8 }),
        settings: { breadth: 3, maxIterations: 0 },
        cacheMode: "read-write",
        cacheDir: path.join(dir, "cache"),
      });
      expect(result).toMatchObject({ status: "finished", stopReason: "max-iterations" });
      expect(kinds()).toEqual(["analyze", "draft", "draft", "draft"]);
      const record = recordOf(resultDir);
      const drafts = record.drafts as Array<{ id: number; selfScore: number; selfCheckSpan: { startMs: number; endMs: number }; requestHashes: string[] }>;
      expect(drafts).toHaveLength(3);
      expect(new Set(drafts.map((draft) => draft.requestHashes[0])).size).toBe(3);
      const best = drafts.find((draft) => draft.id === record.bestDraft)!;
      expect(best.selfScore).toBe(Math.max(...drafts.map((draft) => draft.selfScore)));
      expect(pageOf(resultDir)).toContain("<script");
      const latestStart = Math.max(...drafts.map((draft) => draft.selfCheckSpan.startMs));
      const earliestEnd = Math.min(...drafts.map((draft) => draft.selfCheckSpan.endMs));
      expect(latestStart).toBeLessThan(earliestEnd);
    },
    AGENT_TEST_MS,
  );
});

describe("the agent's budgets and switches", () => {
  it(
    "token and cost budgets stop the loop with their reason",
    async () => {
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [scriptlessPageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const tokens = path.join(dir, "tokens");
      const [byTokens] = await runAgentRun({
        tasks: [task],
        resultDir: tokens,
        drafter: spec(),
        settings: { maxIterations: 5, replay: false, budgetTokens: 1000 },
        cacheMode: "off",
      });
      expect(byTokens).toMatchObject({ status: "finished", stopReason: "token-budget" });
      expect(recordOf(tokens).drafts).toHaveLength(1);
      const cost = path.join(dir, "cost");
      const priced = spec({ pricing: { inputPerMillion: 2.5, outputPerMillion: 10 } });
      const [byCost] = await runAgentRun({
        tasks: [task],
        resultDir: cost,
        drafter: priced,
        settings: { maxIterations: 5, replay: false, budgetUsd: 0.0001 },
        cacheMode: "off",
      });
      expect(byCost).toMatchObject({ status: "finished", stopReason: "cost-budget" });
      expect(recordOf(cost).usage.costUsd).toBeGreaterThan(0);
    },
    AGENT_TEST_MS,
  );

  it(
    "edits that do not apply fall back to a complete page; no critique revises from the findings",
    async () => {
      const badEdit = "<<<<<<< SEARCH\n<div>nowhere in the page</div>\n=======\n<div>x</div>\n>>>>>>> REPLACE";
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        "revise-edits": [badEdit],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "edits");
      await runAgentRun({
        tasks: [task],
        resultDir,
        drafter: spec(),
        settings: { maxIterations: 1, replay: false, critique: false, revise: "edits" },
        cacheMode: "off",
      });
      expect(kinds()).toEqual(["analyze", "draft", "revise-edits", "revise"]);
      const revision = recordOf(resultDir).drafts[1];
      expect(revision).toMatchObject({ origin: "revise-edits-fallback", edits: { proposed: 1, applied: 0 } });
      expect(revision.edits.failed[0]).toMatch(/is not in the page/);
    },
    AGENT_TEST_MS,
  );
});

/** Runs `iwr agent` in a child process; resolves with its exit code (null when killed). `signal` is sent once, when `killWhen` holds. */
function agentProcess(args: string[], killWhen?: () => boolean, signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/iwr.js", "--quiet", "agent", ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, OPENAI_API_KEY: "sk-test-agent" },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    let sent = false;
    const watch = killWhen
      ? setInterval(() => {
          if (!sent && killWhen()) {
            sent = true;
            child.kill(signal);
          }
        }, 50)
      : undefined;
    child.on("error", reject);
    child.on("exit", (code) => {
      if (watch) clearInterval(watch);
      if (code !== null && code !== 0 && !killWhen) reject(new Error(`iwr agent exited ${code}: ${stderr}`));
      resolve(code);
    });
  });
}

describe("the agent's persistence and inputs", () => {
  it(
    "killed (SIGKILL) during its self-check and resumed: it completes, and no model request is sent twice",
    async () => {
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "resume");
      const args = [
        "--data",
        DATA,
        "--result",
        resultDir,
        "--model",
        "gpt-4o",
        "--base-url",
        server.baseURL,
        "--ids",
        String(TASK_ID),
        "--max-iterations",
        "1",
        "--cache",
        "off",
      ];
      const shots = path.join(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).iteration(0), "self-check");
      // The first draft's self-check has begun: prepare, analyze and draft are behind it, checkpointed.
      const killed = await agentProcess(args, () => fs.existsSync(shots) && fs.readdirSync(shots).length > 0);
      expect(killed).toBeNull();
      expect(kinds()).toEqual(["analyze", "draft"]);
      expect(fs.existsSync(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).page)).toBe(false);
      expect(await agentProcess([...args, "--resume"])).toBe(0);
      expect(kinds()).toEqual(["analyze", "draft", "critique", "revise"]);
      const record = recordOf(resultDir);
      expect(record).toMatchObject({ status: "finished", stopReason: "max-iterations", bestDraft: 1 });
      expect(pageOf(resultDir)).toContain("<script");
    },
    AGENT_TEST_MS,
  );

  it(
    "stopped by SIGINT during its self-check: it finishes that node, keeps the checkpoint, says it stopped, and --resume completes",
    async () => {
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "interrupted");
      const args = [
        "--data",
        DATA,
        "--result",
        resultDir,
        "--model",
        "gpt-4o",
        "--base-url",
        server.baseURL,
        "--ids",
        String(TASK_ID),
        "--max-iterations",
        "1",
        "--cache",
        "off",
      ];
      const shots = path.join(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).iteration(0), "self-check");
      const before = server.chatRequests().length;
      const code = await agentProcess(args, () => fs.existsSync(shots) && fs.readdirSync(shots).length > 0, "SIGINT");
      // Exit 1: the task is not done. The self-check it was in finished (its record is there); nothing after it ran.
      expect(code).toBe(1);
      expect(server.chatRequests().length - before).toBe(2);
      expect(recordOf(resultDir)).toMatchObject({ status: "stopped" });
      expect(fs.existsSync(path.join(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).iteration(0), "selfcheck.json"))).toBe(true);
      expect(fs.existsSync(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).page)).toBe(false);
      expect(await agentProcess([...args, "--resume"])).toBe(0);
      expect(server.chatRequests().length - before).toBe(4);
      expect(recordOf(resultDir)).toMatchObject({ status: "finished", stopReason: "max-iterations", bestDraft: 1 });
    },
    AGENT_TEST_MS,
  );

  it(
    "sends byte-identical requests for a copy of the task without checkpoints, actions or assertions, and opens no checkpoint",
    async () => {
      const model = scriptedAgentModel({ analyze: [storyboard()], draft: [scriptlessPageReply(task)] });
      server.setReplyFunction(model.reply);
      // The copy: no checkpoints/ folder, and the line's actions replaced by one empty placeholder (the schema wants one).
      const copy = path.join(dir, "stripped");
      fs.mkdirSync(path.join(copy, "iwr-mini"), { recursive: true });
      fs.cpSync(task.dir, path.join(copy, "iwr-mini", String(TASK_ID)), { recursive: true, filter: (source) => !source.includes(`${path.sep}checkpoints`) });
      const line = {
        ...task.line,
        action_sequence: [{ type: "Click", parameters: { description: "-" }, logical_assertion: "", visual_evaluation_flag: false }],
      };
      fs.writeFileSync(path.join(copy, "iwr-mini.jsonl"), `${JSON.stringify(line)}\n`);
      const [bare] = await loadTasks(path.join(copy, "iwr-mini.jsonl"), { needsCheckpoints: false });

      // The original: a private full copy, so no other test file reads its checkpoints meanwhile.
      const full = path.join(dir, "full");
      fs.mkdirSync(path.join(full, "iwr-mini"), { recursive: true });
      fs.cpSync(task.dir, path.join(full, "iwr-mini", String(TASK_ID)), { recursive: true });
      fs.writeFileSync(path.join(full, "iwr-mini.jsonl"), `${JSON.stringify(task.line)}\n`);
      const [fullTask] = await loadTasks(path.join(full, "iwr-mini.jsonl"));
      const checkpoints = fullTask!.truth.checkpointPaths;
      expect(checkpoints.length).toBeGreaterThan(0);
      // Reading a file moves a days-old access time (relatime); shown first on a probe so the check below can fail.
      const daysAgo = () => new Date(Date.now() - 3 * 24 * 3600 * 1000);
      const probe = path.join(full, "probe.bin");
      fs.writeFileSync(probe, "x");
      fs.utimesSync(probe, daysAgo(), fs.statSync(probe).mtime);
      fs.readFileSync(probe);
      const atimeMoves = fs.statSync(probe).atimeMs > Date.now() - 24 * 3600 * 1000;
      for (const file of checkpoints) fs.utimesSync(file, daysAgo(), fs.statSync(file).mtime);
      const settings = { maxIterations: 0, replay: false };
      await runAgentRun({ tasks: [fullTask!], resultDir: path.join(dir, "leak-original"), drafter: spec(), settings, cacheMode: "off" });
      if (atimeMoves) for (const file of checkpoints) expect(fs.statSync(file).atimeMs, file).toBeLessThan(Date.now() - 2 * 24 * 3600 * 1000);
      else console.warn("this filesystem does not move access times (noatime): the no-checkpoint-read check is skipped");
      const original = server.chatRequests().map((request) => JSON.stringify(request.body));
      server.requests.length = 0;
      await runAgentRun({ tasks: [bare!], resultDir: path.join(dir, "leak-copy"), drafter: spec(), settings, cacheMode: "off" });
      const stripped = server.chatRequests().map((request) => JSON.stringify(request.body));
      expect(original).toHaveLength(2);
      expect(stripped).toEqual(original);
    },
    AGENT_TEST_MS,
  );
});
