/**
 * Exit codes (README, src/cli/exit-codes.ts): 0 done, 1 some or all tasks failed (the
 * closing line says how many and where), 2 usage error before any work, 3 broken.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { runIwrCapturing } from "../support/cli.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";
import { writeTimecodedTaskSet } from "../support/single-pass-videos.ts";

let dir: string;
let jsonlPath: string;
let server: FakeOpenAIServer;
const output: string[] = [];
let savedKey: string | undefined;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-exit-codes-"));
  ({ jsonlPath } = await writeTimecodedTaskSet(dir, [2, 2, 3]));
  server = await startOpenAIServer({ models: ["local-model"] });
  savedKey = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = "sk-exit-codes-0000000000";
});
afterAll(async () => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  output.length = 0;
  process.exitCode = undefined;
});

const iwr = (...args: string[]): Promise<number> => runIwrCapturing(output, args);

const generate = (result: string, ...extra: string[]) =>
  iwr("generate", "--data", jsonlPath, "--result", path.join(dir, result), "--model", "local-model", "--base-url", server.baseURL, "--cache", "off", ...extra);

describe("exit codes", () => {
  it("1 when every task failed, with the count and where each error is", async () => {
    server.setReplyFunction(() => ({ garbage: true }));
    expect(await generate("all-failed")).toBe(1);
    const text = output.join("\n");
    expect(text).toMatch(/3 of 3 task\(s\) failed; each error is in its generation\.json:/);
    expect(text).toContain(`task 1: MODEL_REPLY:`);
    expect(text).toContain(`(see ${path.join(dir, "all-failed", "1", "local-model")}/generation.json)`);
  });

  it("1 when some tasks failed, 0 when none did", async () => {
    let call = 0;
    server.setReplyFunction(() => (++call === 2 ? { garbage: true } : "```html\n<html><body>ok</body></html>\n```"));
    expect(await generate("some-failed", "--workers", "1")).toBe(1);
    expect(output.join("\n")).toMatch(/1 of 3 task\(s\) failed/);
    server.setReplyFunction(() => "```html\n<html><body>ok</body></html>\n```");
    expect(await generate("none-failed")).toBe(0);
  });

  it("2 for usage errors, before anything is written", async () => {
    expect(await iwr("generate", "--data", jsonlPath, "--result", path.join(dir, "u1"), "--model", "local-model", "--no-such-flag")).toBe(2);
    expect(await iwr("generate", "--data", jsonlPath, "--result", path.join(dir, "u2"))).toBe(2);
    expect(await iwr("generate", "--data", jsonlPath, "--result", path.join(dir, "u3"), "--model", "local-model", "--workers", "0")).toBe(2);
    expect(await iwr("evaluate", "--data", path.join(dir, "missing.jsonl"), "--result", path.join(dir, "u4"), "--model", "m")).toBe(2);
    expect(await iwr("frobnicate")).toBe(2);
    for (const name of ["u1", "u2", "u3", "u4"]) expect(fs.existsSync(path.join(dir, name))).toBe(false);
    expect(await iwr("--help")).toBe(0);
  });

  it("3 when the run cannot start (the endpoint is not there)", async () => {
    expect(
      await iwr("generate", "--data", jsonlPath, "--result", path.join(dir, "down"), "--model", "local-model", "--base-url", "http://127.0.0.1:9/v1"),
    ).toBe(3);
    expect(output.join("\n")).toMatch(/is not reachable/);
  });
});
