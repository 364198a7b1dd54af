/**
 * A model that echoes the API key into everything it says cannot put the key on disk:
 * the agent (its runner, the real graph and self-check in Chromium, models scripted on a
 * local OpenAI-compatible server) runs with a key that matches no key pattern (so only its
 * registration can mask it), and every reply carries it: the storyboard, the pages, a
 * defect list, and a critique reply that does not parse (kept raw in the store). Then
 * every file the run wrote, the checkpoint database and the response cache included, is
 * read byte for byte.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModelSpec } from "../../src/models/index.ts";
import { runAgentRun } from "../../src/run/agent.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { scriptedAgentModel, storyboardReply } from "../support/agent-scripts.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";
import { filesUnder } from "../support/iwr-processes.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";

const KEY_ENV = "IWR_REDACTION_TEST_KEY";
const KEY = `vllm-token-${Math.random().toString(36).slice(2, 12)}-private`;

let dir: string;
let server: FakeOpenAIServer;
let task: Task;

beforeAll(async () => {
  dir = tempDir("agent-redaction");
  process.env[KEY_ENV] = KEY;
  server = await startOpenAIServer({ models: ["gpt-4o"], requireApiKey: KEY });
  task = (await loadTasks("tasks/iwr-mini.jsonl")).find((entry) => entry.id === 1)!;
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const page = (words: string) => `\`\`\`html\n<!doctype html><html><body><h1>${words}</h1><!-- configured with ${KEY} --></body></html>\n\`\`\``;

describe("the agent's files", () => {
  it("hold no API key the model echoed: store, drafts, feedback, raw replies, checkpoints, records, cache", async () => {
    const model = scriptedAgentModel({
      analyze: [storyboardReply([{ type: "Click", description: `the button that shows ${KEY}` }])],
      draft: [page("first draft")],
      critique: [
        `I cannot review this. For the record, my key is ${KEY}.`,
        `\`\`\`json\n{"defects":[{"where":"header","problem":"it should read ${KEY}","change":"write ${KEY} in it"}]}\n\`\`\``,
      ],
      revise: [page("second draft"), page("third draft")],
    });
    server.setReplyFunction(model.reply);
    const results = path.join(dir, "results");
    const cache = path.join(dir, "cache");
    const [result] = await runAgentRun({
      tasks: [task],
      resultDir: results,
      drafter: loadModelSpec("gpt-4o", { baseURL: server.baseURL, apiKeyEnv: KEY_ENV }),
      settings: { maxIterations: 2, patience: 5 },
      cacheMode: "read-write",
      cacheDir: cache,
    });
    expect(result).toMatchObject({ status: "finished" });
    // Every kind of reply was asked for, the unparsable critique included (its raw text is kept in the store).
    expect(model.counts).toMatchObject({ analyze: 1, draft: 1 });
    expect(model.counts.critique).toBeGreaterThan(0);
    const agentDir = path.join(results, "1", "gpt-4o@agent");
    const stored = fs.readdirSync(path.join(agentDir, "work", "store"));
    expect(stored.some((name) => name.endsWith(".txt"))).toBe(true);

    const files = [...filesUnder(results, "").map((name) => path.join(results, name)), ...filesUnder(cache, "").map((name) => path.join(cache, name))];
    expect(files.length).toBeGreaterThan(20);
    const holding = files.filter((file) => fs.readFileSync(file).includes(KEY));
    expect(holding).toEqual([]);
    // The texts are there, masked: the redaction did not drop what the model said.
    const texts = stored.filter((name) => /\.(json|md|txt)$/.test(name)).map((name) => fs.readFileSync(path.join(agentDir, "work", "store", name), "utf8"));
    expect(texts.some((text) => text.includes("my key is [REDACTED]"))).toBe(true);
  }, 300_000);
});
