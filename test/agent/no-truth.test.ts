/**
 * Truth never reaches the agent. The agent (its runner, the real graph and the real
 * self-check in Chromium, models scripted on a local OpenAI-compatible server) runs on a
 * copy of a bundled task whose assertions are canary strings and whose checkpoints are
 * canary images, beside eval.json files an earlier run could have left. Afterwards:
 *
 * - no file or folder of the task's truth (checkpoints, the states after every action, the
 *   reference site, the recording's own record) and no eval.json was opened, by any process: the kernel's access times,
 *   set far in the past before the run, say so (relatime updates them on any read);
 * - no request carried a canary string or a checkpoint's image.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModelSpec } from "../../src/models/index.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { agentDirFor, agentFiles } from "../../src/results/layout.ts";
import { runAgentRun } from "../../src/run/agent.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, storyboardReply, truePageReply } from "../support/agent-scripts.ts";
import { type FakeOpenAIServer, messageParts, startOpenAIServer } from "../support/openai-server.ts";

const TASK_ID = 2;
const CANARY = `CANARY-${Math.random().toString(36).slice(2, 10)}`;
const LONG_AGO = new Date(0);

let scratch: string;
let server: FakeOpenAIServer;
let original: Task;
let canaryTask: Task;
/** Files and folders the run must never open, with a note of what each is. */
const untouchable = new Map<string, string>();
const checkpointHashes = new Set<string>();

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? [file, ...walk(file)] : [file];
  });
}

/** Marks a path as never read: its access time goes far into the past, its modification time stays. */
function markUnread(file: string): void {
  fs.utimesSync(file, LONG_AGO, fs.statSync(file).mtime);
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-no-truth-"));
  original = (await loadTasks("tasks/iwr-mini.jsonl")).find((task) => task.id === TASK_ID)!;
  server = await startOpenAIServer({ models: ["gpt-4o"] });

  // The task set: the bundled task's folder copied, its assertions and checkpoints replaced by canaries.
  const setDir = path.join(scratch, "canary");
  fs.cpSync(original.dir, path.join(setDir, String(TASK_ID)), { recursive: true });
  const line = {
    ...original.line,
    action_sequence: original.line.action_sequence.map((action, index) => ({ ...action, logical_assertion: `${CANARY} assertion ${index + 1}` })),
  };
  fs.writeFileSync(path.join(scratch, "canary.jsonl"), `${JSON.stringify(line)}\n`);
  const checkpoints = path.join(setDir, String(TASK_ID), "checkpoints");
  const states = path.join(setDir, String(TASK_ID), "states");
  const { width, height } = original.inputs.resolution;
  // The bundled suite keeps the state after every action: truth like the checkpoints, canaries too.
  expect(original.truth.actionStatePaths?.length).toBe(original.truth.actions.length + 1);
  for (const file of [
    ...fs.readdirSync(checkpoints).map((name) => path.join(checkpoints, name)),
    ...fs.readdirSync(states).map((name) => path.join(states, name)),
  ]) {
    const noise = Buffer.from(Array.from({ length: width * height * 3 }, () => Math.floor(Math.random() * 256)));
    const png = await sharp(noise, { raw: { width, height, channels: 3 } })
      .png()
      .withMetadata({ exif: { IFD0: { ImageDescription: CANARY } } })
      .toBuffer();
    fs.writeFileSync(file, png);
    checkpointHashes.add(sha256(png));
  }
  canaryTask = (await loadTasks(path.join(scratch, "canary.jsonl"))).find((task) => task.id === TASK_ID)!;

  // Scores an earlier run could have left: in the agent's folder and in the drafts' scores beside it.
  const agentDir = agentDirFor(path.join(scratch, "results"), TASK_ID, "gpt-4o");
  const canaryEval = `${JSON.stringify({ assertions: [{ assertion: `${CANARY} in an old eval.json`, result: "Yes" }] })}\n`;
  for (const file of [agentFiles(agentDir).dir, agentFiles(agentDir).draftScores(0), agentFiles(agentDir).draftScores(1)]) {
    fs.mkdirSync(file, { recursive: true });
    fs.writeFileSync(path.join(file, "eval.json"), canaryEval);
    untouchable.set(path.join(file, "eval.json"), "an eval.json");
  }

  // Loading the task read its checkpoints (the loader checks them): only now are they marked.
  const taskDir = path.join(setDir, String(TASK_ID));
  for (const file of [checkpoints, ...walk(checkpoints)]) untouchable.set(file, "a checkpoint");
  for (const file of [states, ...walk(states)]) untouchable.set(file, "a state after an action");
  for (const file of [path.join(taskDir, "reference"), ...walk(path.join(taskDir, "reference"))]) untouchable.set(file, "the reference site");
  untouchable.set(path.join(taskDir, "recording.json"), "the recording's record");
  for (const file of untouchable.keys()) markUnread(file);
});

afterAll(async () => {
  await server.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe("the agent sees no truth", () => {
  it("this filesystem records reads in access times (else the check below would prove nothing)", () => {
    const control = path.join(scratch, "control.txt");
    fs.writeFileSync(control, "read me");
    markUnread(control);
    expect(fs.statSync(control).atimeMs).toBe(0);
    fs.readFileSync(control);
    expect(fs.statSync(control).atimeMs, "reads are not recorded here (a noatime mount?)").toBeGreaterThan(0);
  });

  it("opens no checkpoint, reference file or eval.json, and sends no canary in any request", async () => {
    const model = scriptedAgentModel({
      analyze: [storyboardReply(original.line.action_sequence.map(replayActionOf))],
      draft: [truePageReply(original)],
      critique: [CRITIQUE_REPLY],
      revise: [truePageReply(original)],
    });
    server.setReplyFunction(model.reply);
    const [result] = await runAgentRun({
      tasks: [canaryTask],
      resultDir: path.join(scratch, "results"),
      drafter: loadModelSpec("gpt-4o", { baseURL: server.baseURL, apiKeyEnv: "none" }),
      settings: { maxIterations: 1, patience: 5 },
      cacheMode: "off",
    });
    // The run went through every node: analysis, a draft and a revision, each self-checked in a browser.
    expect(result).toMatchObject({ status: "finished", stopReason: "max-iterations" });
    expect(Object.values(model.counts).reduce((sum, count) => sum + count, 0)).toBe(4);

    const opened = [...untouchable].filter(([file]) => fs.statSync(file).atimeMs !== 0).map(([file, what]) => `${what}: ${file}`);
    expect(opened).toEqual([]);

    const requests = server.chatRequests();
    expect(requests.length).toBe(4);
    expect(JSON.stringify(requests.map((request) => request.body))).not.toContain(CANARY);
    const sentImages = requests.flatMap((request) =>
      (request.body?.messages ?? []).flatMap((_, index) =>
        messageParts(request, index).flatMap((part) => (part.type === "image_url" ? [(part.image_url as { url: string }).url] : [])),
      ),
    );
    expect(sentImages.length).toBeGreaterThan(0);
    for (const url of sentImages) {
      const bytes = Buffer.from(url.slice(url.indexOf(",") + 1), "base64");
      expect(bytes.includes(CANARY)).toBe(false);
      expect(checkpointHashes.has(sha256(bytes))).toBe(false);
    }
  }, 300_000);
});
