/**
 * The reconstruction agent end to end: the real graph, real Chromium self-checks, and a
 * local OpenAI-compatible server on 127.0.0.1 answering from a script.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runAgentRun } from "../../src/run/agent.ts";
import { loadModelSpec } from "../../src/models/index.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { agentDirFor, agentFiles } from "../../src/results/layout.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { startOpenAIServer, type FakeOpenAIServer } from "../support/openai-server.ts";
import { CRITIQUE_REPLY, requestKind, scriptedAgentModel, scriptlessPageReply, storyboardReply, truePageReply } from "../support/agent-scripts.ts";

const TASK_ID = 4;
let dir: string;
let server: FakeOpenAIServer;
let task: Task;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-agent-"));
  task = (await loadTasks("tasks/iwr-mini.jsonl")).find((entry) => entry.id === TASK_ID)!;
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  server.requests.length = 0;
});

const spec = () => loadModelSpec("gpt-4o", { baseURL: server.baseURL, apiKeyEnv: "none" });
const storyboard = () => storyboardReply(task.line.action_sequence.map(replayActionOf));

describe("reconstruction agent", () => {
  it("keeps an improvement: a scriptless first draft, then the full page", async () => {
    const model = scriptedAgentModel({ analyze: [storyboard()], draft: [scriptlessPageReply(task)], critique: [CRITIQUE_REPLY], revise: [truePageReply(task)] });
    server.setReplyFunction(model.reply);
    const resultDir = path.join(dir, "improve");
    const [result] = await runAgentRun({ tasks: [task], resultDir, drafter: spec(), settings: { maxIterations: 1 }, cacheMode: "off" });
    expect(result).toMatchObject({ status: "finished", stopReason: "max-iterations" });
    const files = agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o"));
    const record = JSON.parse(fs.readFileSync(files.record, "utf8"));
    expect(record.drafts).toHaveLength(2);
    expect(record.bestDraft).toBe(1);
    expect(record.drafts[1].selfScore).toBeGreaterThan(record.drafts[0].selfScore + 0.3);
    expect(fs.readFileSync(files.page, "utf8")).toContain("<script");
    expect(server.chatRequests().map(requestKind)).toEqual(["analyze", "draft", "critique", "revise"]);
  });
});
