/**
 * What the experiment tests share: a temporary folder, a local OpenAI-compatible server
 * (a fixture answering from a script), a response cache of the test's own, and helpers
 * to write configs and small pages.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, vi } from "vitest";
import { tempDir } from "./evaluator-replay-fixtures.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "./openai-server.ts";

export const DATA = path.resolve("tasks/iwr-mini.jsonl");
/**
 * A long test's bound: it only catches a hang. A run of two tasks and four arms with
 * self-checks took over 420 s in a full test:long run on a slow 2-core machine.
 */
export const TEST_MS = 900_000;
export const evaluatorBlock = "evaluator:\n  judges: offline\n";

/** A page that fails at the first step: what it scores is not the point, and its replay is short. */
export const minimalPageReply = (text: string) => `\`\`\`html\n<!doctype html><html><body><h1>${text}</h1></body></html>\n\`\`\``;
export const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"));

/**
 * Arms whose pages fail early (blank, a single pass answering minimalPageReply and, unless
 * `frozen: false`, a frozen mutant): what the bookkeeping tests run.
 */
export function threeArmConfig(options: { ids: readonly number[]; out: string; baseURL: string; frozen?: boolean }): string {
  const frozenArm = options.frozen === false ? "" : "  - name: frozen\n    kind: mutant:freeze-after:0\n";
  return `tasks:
  file: ${DATA}
  ids: [${options.ids.join(", ")}]
out: ${options.out}
${evaluatorBlock}arms:
  - name: blank
    kind: blank
  - name: single
    kind: single-pass
    model: gpt-4o
    baseURL: ${options.baseURL}
${frozenArm}`;
}

export function writeConfig(file: string, body: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, body);
  return file;
}

/** Registers the hooks; the returned getters are valid inside tests. */
export function experimentFixture(prefix: string): { dir: () => string; server: () => FakeOpenAIServer } {
  let dir: string;
  let server: FakeOpenAIServer;
  const savedCacheDir = process.env.IWR_CACHE_DIR;
  beforeAll(async () => {
    dir = tempDir(prefix);
    // A cache of this test's own: answers cached by an earlier test run must not stand in for requests counted here.
    process.env.IWR_CACHE_DIR = path.join(dir, "cache");
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
  return { dir: () => dir, server: () => server };
}
