/**
 * The reconstruction agent end to end (killed and stopped runs resumed): the real graph, real Chromium self-checks,
 * and a local OpenAI-compatible server on 127.0.0.1 answering from a script (a fixture: the
 * scripted answers are chosen here). Requests are counted at the server. The shared setup
 * is test/support/agent-fixture.ts.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentDirFor, agentFiles } from "../../src/results/layout.ts";
import { AGENT_TEST_MS, DATA, dir, kinds, pageOf, recordOf, server, storyboard, TASK_ID, task, useAgentFixture } from "../support/agent-fixture.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, scriptlessPageReply, truePageReply } from "../support/agent-scripts.ts";

useAgentFixture();

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

/** A draft, then a critique and a revision into the true page: the agent improves once. */
const improvingModel = () =>
  scriptedAgentModel({
    analyze: [storyboard()],
    draft: [scriptlessPageReply(task)],
    critique: [CRITIQUE_REPLY],
    revise: [truePageReply(task)],
  });

/** `iwr agent` on the task into `resultDir`: one iteration, against the local server, no response cache. */
const agentArgs = (resultDir: string) => [
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

/** The first draft's self-check has begun (its first screenshot is written): prepare, analyze and draft are behind it, checkpointed. */
function selfCheckBegun(resultDir: string): boolean {
  const shots = path.join(agentFiles(agentDirFor(resultDir, TASK_ID, "gpt-4o")).iteration(0), "self-check");
  return fs.existsSync(shots) && fs.readdirSync(shots).length > 0;
}

describe("the agent's persistence", () => {
  it(
    "killed (SIGKILL) during its self-check and resumed: it completes, and no model request is sent twice",
    async () => {
      server.setReplyFunction(improvingModel().reply);
      const resultDir = path.join(dir, "resume");
      const args = agentArgs(resultDir);
      const killed = await agentProcess(args, () => selfCheckBegun(resultDir));
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
      server.setReplyFunction(improvingModel().reply);
      const resultDir = path.join(dir, "interrupted");
      const args = agentArgs(resultDir);
      const before = server.chatRequests().length;
      const code = await agentProcess(args, () => selfCheckBegun(resultDir), "SIGINT");
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
});
