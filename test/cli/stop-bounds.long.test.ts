/**
 * A model that stops answering mid-call cannot hold a command: SIGTERM ends `iwr agent`
 * and `iwr run` within the stop's grace period (the call in flight cancelled, the
 * checkpoint kept, the cell left unfinished), and `iwr agent --wall-time` bounds a call in
 * flight too. The model is the local OpenAI-compatible server, holding its answer forever
 * (a fixture); the commands run as their own processes.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { STOP_GRACE_MS } from "../../src/cli/process-guards.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";
import { evaluatorBlock } from "../support/experiment.ts";
import { startIwr, until } from "../support/iwr-processes.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";

const DATA = path.resolve("tasks/iwr-mini.jsonl");
let dir: string;
let server: FakeOpenAIServer;

beforeAll(async () => {
  dir = tempDir("stop-bounds");
  server = await startOpenAIServer({ models: ["gpt-4o"], reply: () => ({ hang: true }) });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  server.requests.length = 0;
});

const env = (name: string) => ({ ...process.env, IWR_CACHE_DIR: path.join(dir, `cache-${name}`), OPENAI_API_KEY: "" });
const agentArgs = (result: string) => ["agent", "--data", DATA, "--ids", "1", "--result", result, "--model", "gpt-4o", "--base-url", server.baseURL];

describe("a model call that never ends", () => {
  it("iwr agent: SIGTERM cancels the call after the grace period and stops with the checkpoint kept", async () => {
    const result = path.join(dir, "agent-sigterm");
    const agent = startIwr(agentArgs(result), env("agent"));
    await until("the agent's first model call", () => server.chatRequests().length > 0, 180_000);
    const signalled = Date.now();
    agent.child.kill("SIGTERM");
    const code = await agent.exited;
    const took = Date.now() - signalled;
    expect(took).toBeLessThan(STOP_GRACE_MS + 8_000);
    expect(code).toBe(1);
    expect(agent.lines.join("\n")).toMatch(/SIGTERM: stopping after the current node; one still running in 5 s is cancelled/);
    expect(agent.lines.join("\n")).toMatch(/task 1: stopped/);
    expect(fs.existsSync(path.join(result, "1", "gpt-4o@agent", "work", "agent.sqlite"))).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(result, "1", "gpt-4o@agent", "agent.json"), "utf8")).status).toBe("stopped");
  }, 300_000);

  it("iwr agent --wall-time: a call still running past the wall time and its grace is cancelled", async () => {
    const result = path.join(dir, "agent-wall-time");
    const agent = startIwr([...agentArgs(result), "--wall-time", "20"], env("wall-time"));
    await until("the agent's first model call", () => server.chatRequests().length > 0, 180_000);
    // The wall time runs from the task's start, before its first call: from that call, at most the wall time, its grace and the closing.
    const calling = Date.now();
    const code = await agent.exited;
    expect(Date.now() - calling).toBeLessThan(20_000 + 5_000 + 10_000);
    expect(code).toBe(1);
    expect(agent.lines.join("\n")).toMatch(/task 1: stopped/);
  }, 300_000);

  it("iwr run: SIGTERM cancels a single-pass call in flight after the grace period; the cell is left unfinished, not failed", async () => {
    const runDir = path.join(dir, "run");
    const config = path.join(dir, "run.yaml");
    fs.writeFileSync(
      config,
      `tasks:\n  file: ${DATA}\n  ids: [1]\nout: ${runDir}\n${evaluatorBlock}` +
        `arms:\n  - name: single\n    kind: single-pass\n    model: gpt-4o\n    baseURL: ${server.baseURL}\n`,
    );
    const run = startIwr(["run", config], env("run"));
    await until("the cell's model call", () => server.chatRequests().length > 0, 180_000);
    const signalled = Date.now();
    run.child.kill("SIGTERM");
    const code = await run.exited;
    expect(Date.now() - signalled).toBeLessThan(STOP_GRACE_MS + 10_000);
    expect(code).toBe(1);
    expect(run.lines.join("\n")).toMatch(/1 cell\(s\) unfinished/);
    expect(fs.readdirSync(runDir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith("cell.json"))).toEqual([]);
  }, 300_000);
});
