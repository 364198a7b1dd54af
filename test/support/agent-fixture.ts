/**
 * What the agent's end-to-end test files share: task 4 of the bundled suite, a local
 * OpenAI-compatible server on 127.0.0.1 answering from a script (a fixture: the scripted
 * answers are chosen by each test), a scratch folder, and readers of the agent's record,
 * page and evaluated score. The agent's tests are split over several files so that the
 * test runner can run them side by side; each file calls `useAgentFixture()` once, and the
 * bindings below (live ES module bindings) hold that file's server, task and folder.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, expect, vi } from "vitest";
import { loadModelSpec } from "../../src/models/index.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { agentDirFor, agentFiles, candidateDirFor } from "../../src/results/layout.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { requestKind, storyboardReply } from "./agent-scripts.ts";
import { runIwrCapturing } from "./cli.ts";
import { experimentFixture } from "./experiment.ts";
import type { FakeOpenAIServer } from "./openai-server.ts";

export const TASK_ID = 4;
/** Each test runs the agent (and some the evaluator) with real Chromium on 2 cores shared with other test files. */
export const AGENT_TEST_MS = 300_000;
export const DATA = "tasks/iwr-mini.jsonl";
export let dir: string;
export let server: FakeOpenAIServer;
export let task: Task;

/**
 * Registers the file's hooks: experimentFixture's folder, server (and response cache of
 * the file's own), cleaned after each test; and the task, loaded before the tests.
 */
export function useAgentFixture(): void {
  const base = experimentFixture("iwr-agent-");
  beforeAll(async () => {
    dir = base.dir();
    server = base.server();
    task = (await loadTasks(DATA)).find((entry) => entry.id === TASK_ID)!;
  });
}

export const spec = (overrides = {}) => loadModelSpec("gpt-4o", { baseURL: server.baseURL, apiKeyEnv: "none", ...overrides });
export const storyboard = () => storyboardReply(task.line.action_sequence.map(replayActionOf));
export const kinds = () => server.chatRequests().map(requestKind);
export const recordOf = (resultDir: string) => JSON.parse(fs.readFileSync(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).record, "utf8"));
export const pageOf = (resultDir: string) => fs.readFileSync(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).page, "utf8");

/** Evaluates the task's page of `model` in `resultDir` with the offline judges (`iwr evaluate`); returns its Final. */
export async function finalScore(resultDir: string, model: string): Promise<number> {
  const code = await runIwrCapturing(
    [],
    ["evaluate", "--data", DATA, "--result", resultDir, "--model", model, "--ids", String(TASK_ID), "--judge", "heuristic", "--grounding", "heuristic"],
  );
  vi.restoreAllMocks();
  expect(code).toBe(0);
  return JSON.parse(fs.readFileSync(path.join(candidateDirFor(resultDir, TASK_ID, model), "eval.json"), "utf8")).scores.final;
}
