/**
 * The agent's graph as LangGraph Studio serves it: `langgraph.json` loaded by the real
 * LangGraph CLI's dev server (`langgraphjs dev`, the program behind `npx
 * @langchain/langgraph-cli dev`), on 127.0.0.1 with no browser, and driven through its HTTP
 * API as Studio drives it: the graph is listed and drawn, and a thread run with only a
 * task's inputs, the settings and a model name as context reaches the end, its drafts
 * self-checked in real Chromium and its model calls answered by a local OpenAI-compatible
 * server from a script (a fixture).
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReconstructionGraph } from "../../agents/reconstruct/graph.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { CRITIQUE_REPLY, requestKind, scriptedAgentModel, scriptlessPageReply, storyboardReply, truePageReply } from "../support/agent-scripts.ts";
import { until } from "../support/iwr-processes.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";
import { freePort } from "../support/redis-server.ts";

const TASK_ID = 4;
const STUDIO_TEST_MS = 300_000;
const require = createRequire(import.meta.url);
const CLI = path.join(path.dirname(require.resolve("@langchain/langgraph-cli/package.json")), "dist/cli/cli.mjs");

let dir: string;
let server: FakeOpenAIServer;
let task: Task;
let studio: ChildProcess;
let studioUrl: string;
const studioLines: string[] = [];

async function api<T>(method: "GET" | "POST", route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${studioUrl}${route}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/**
 * The dev server's environment, from an allowlist: no tracing or API keys of the caller's
 * reach it, its usage analytics are off, and the model endpoint is the local server.
 */
function studioEnv(baseURL: string, draftsDir: string): NodeJS.ProcessEnv {
  const passed = Object.entries(process.env).filter(
    ([name]) => ["PATH", "HOME", "TMPDIR", "LANG", "CI"].includes(name) || name.startsWith("IWR_") || name.startsWith("PLAYWRIGHT_"),
  );
  return {
    ...Object.fromEntries(passed),
    OPENAI_BASE_URL: baseURL,
    IWR_STUDIO_DIR: draftsDir,
    // Every request must name the context's model, never this one.
    IWR_AGENT_MODEL: "not-this-one",
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    LANGSMITH_TRACING: "false",
  };
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

beforeAll(async () => {
  // The dev server keeps its threads (.langgraph_api/) beside the config it is given: a
  // config of its own in a scratch folder (gitignored) keeps them out of the checkout and
  // away from a developer's own Studio sessions. The graph path is relative to it.
  fs.mkdirSync("test/.tmp", { recursive: true });
  dir = fs.mkdtempSync(path.resolve("test/.tmp/studio-"));
  const graph = path.relative(dir, path.resolve("agents/reconstruct/studio.ts")).split(path.sep).join("/");
  const config = JSON.parse(fs.readFileSync("langgraph.json", "utf8"));
  fs.writeFileSync(path.join(dir, "langgraph.json"), JSON.stringify({ ...config, graphs: { reconstruct: `${graph}:reconstruct` } }));
  task = (await loadTasks("tasks/iwr-mini.jsonl")).find((entry) => entry.id === TASK_ID)!;
  server = await startOpenAIServer({ models: ["gpt-4o"] });
  const port = await freePort();
  studioUrl = `http://127.0.0.1:${port}`;
  // Its own process group: the server runs two levels down (CLI, tsx, node) and is ended with the group.
  studio = spawn(
    process.execPath,
    [CLI, "dev", "--config", path.join(dir, "langgraph.json"), "--host", "127.0.0.1", "--port", String(port), "--no-browser", "--no-reload"],
    {
      cwd: dir,
      env: studioEnv(server.baseURL, path.join(dir, "studio")),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  const collect = (chunk: Buffer) => studioLines.push(...chunk.toString().split("\n").filter(Boolean));
  studio.stdout!.on("data", collect);
  studio.stderr!.on("data", collect);
  let ready = false;
  try {
    await until(
      `the LangGraph dev server on ${studioUrl}`,
      () => {
        void answers(`${studioUrl}/ok`).then((ok) => (ready ||= ok));
        return ready || exited(studio);
      },
      120_000,
    );
  } catch (error) {
    throw new Error(`${String(error)}; its output:\n${studioLines.join("\n")}`);
  }
  if (!ready) throw new Error(`the dev server exited (${studio.exitCode ?? studio.signalCode}): ${studioLines.join("\n")}`);
}, 180_000);

afterAll(async () => {
  if (studio?.pid !== undefined && !exited(studio)) {
    const gone = new Promise((resolve) => studio.once("exit", resolve));
    process.kill(-studio.pid, "SIGTERM");
    const killer = setTimeout(() => process.kill(-studio.pid!, "SIGKILL"), 10_000);
    await gone;
    clearTimeout(killer);
    // The CLI ends its children from its own exit handler: wait until nothing answers on the port.
    let closed = false;
    await until(
      "the dev server's port to close",
      () => {
        void answers(`${studioUrl}/ok`).then((ok) => (closed ||= !ok));
        return closed;
      },
      30_000,
    ).catch(() => process.kill(-studio.pid!, "SIGKILL"));
  }
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("LangGraph Studio's dev server", () => {
  it("lists the reconstruct graph and draws the compiled graph's nodes and edges", async () => {
    const assistants = await api<Array<{ assistant_id: string; graph_id: string }>>("POST", "/assistants/search", { graph_id: "reconstruct" });
    expect(assistants.map((assistant) => assistant.graph_id)).toEqual(["reconstruct"]);
    const drawn = await api<{ nodes: Array<{ id: string }>; edges: Array<{ source: string; target: string; conditional?: boolean }> }>(
      "GET",
      `/assistants/${assistants[0]!.assistant_id}/graph`,
    );
    const compiled = await buildReconstructionGraph().getGraphAsync();
    expect(drawn.nodes.map((node) => node.id).sort()).toEqual(Object.keys(compiled.nodes).sort());
    const edgeText = (edge: { source: string; target: string; conditional?: boolean }) =>
      `${edge.source}${edge.conditional ? " -?-> " : " --> "}${edge.target}`;
    expect(drawn.edges.map(edgeText).sort()).toEqual(compiled.edges.map(edgeText).sort());
  });

  it(
    "runs a thread to the end from a task's inputs, settings and a model named in the context",
    async () => {
      const model = scriptedAgentModel({
        analyze: [storyboardReply(task.line.action_sequence.map(replayActionOf))],
        draft: [scriptlessPageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const thread = await api<{ thread_id: string }>("POST", "/threads", {});
      const values = await api<{
        stopReason?: string;
        bestDraftId?: number;
        drafts: Array<{ id: number; origin: string; checked: boolean; selfScore?: number; page?: { path: string } }>;
      }>("POST", `/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: "reconstruct",
        input: { inputs: task.inputs, settings: { maxIterations: 1 } },
        context: { model: "gpt-4o" },
      });
      expect(values.stopReason, studioLines.slice(-20).join("\n")).toBe("max-iterations");
      // Every request reached the model the context named, not IWR_AGENT_MODEL's.
      expect(server.chatRequests().map(requestKind)).toEqual(["analyze", "draft", "critique", "revise"]);
      expect(server.chatRequests().every((request) => request.body?.model === "gpt-4o")).toBe(true);
      expect(values.drafts.map((draft) => [draft.id, draft.origin, draft.checked])).toEqual([
        [0, "draft", true],
        [1, "revise", true],
      ]);
      // The revision (the page with its scripts) replays as the video does; the scriptless first draft does not.
      expect(values.bestDraftId).toBe(1);
      expect(values.drafts[1]!.selfScore!).toBeGreaterThan(values.drafts[0]!.selfScore! + 0.3);
      // The drafts live in this thread's own folder under IWR_STUDIO_DIR, never in state.
      const threadDir = path.join(dir, "studio", thread.thread_id);
      expect(values.drafts[1]!.page!.path.startsWith(threadDir)).toBe(true);
      expect(fs.readFileSync(values.drafts[1]!.page!.path, "utf8")).toContain("<script");
      expect(fs.existsSync(path.join(threadDir, "iterations", "1", "selfcheck.json"))).toBe(true);
    },
    STUDIO_TEST_MS,
  );

  it(
    "refuses a context that brings some of the run-time parts but not all",
    async () => {
      const thread = await api<{ thread_id: string }>("POST", "/threads", {});
      const run = await fetch(`${studioUrl}/threads/${thread.thread_id}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "reconstruct", input: { inputs: task.inputs, settings: { maxIterations: 0 } }, context: { workDir: dir } }),
      });
      const text = await run.text();
      expect(text).toMatch(/a run context needs all of drafter, critic, workDir, feedback; missing: drafter, critic, feedback/);
    },
    STUDIO_TEST_MS,
  );
});
