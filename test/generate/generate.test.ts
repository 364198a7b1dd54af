import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.ts";
import { loadModelSpec } from "../../src/models/index.ts";
import { PROMPTS_DIR } from "../../src/prompts/template.ts";
import { type GenerationRecord, runGeneration } from "../../src/run/generate.ts";
import { TASK_FILES } from "../../src/tasks/layout.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import { type FakeOpenAIServer, messageParts, type RecordedRequest, startOpenAIServer } from "../support/openai-server.ts";
import { writeTimecodedTaskSet } from "../support/single-pass-videos.ts";

const API_KEY = "sk-test-generate-0123456789abcdef";
const MODEL = "gpt-4o";
let dir: string;
let jsonlPath: string;
let server: FakeOpenAIServer;
let savedKey: string | undefined;

/** Tasks 1, 2, 3 have 3, 4 and 5 s videos: 1 sheet + 3, 4 or 5 frames. Task 1's reply has no HTML. */
function replyFor(request: RecordedRequest, version: string) {
  const images = messageParts(request).filter((part) => part.type === "image_url").length;
  if (images === 4) return { text: `I cannot do that (${version}).` };
  return {
    text:
      `\`\`\`html\n<html><body data-images="${images}" data-version="${version}">` +
      '<img src="__PLACEHOLDER_ASSETS_BASE_DIR__/001.png" width="32" height="32"></body></html>\n```',
  };
}

function cli(...args: string[]): Promise<number> {
  return main([
    "node",
    "iwr",
    "generate",
    "--data",
    jsonlPath,
    "--model",
    MODEL,
    "--base-url",
    server.baseURL,
    "--cache-dir",
    path.join(dir, "cache"),
    "--protocol",
    "corrected",
    ...args,
  ]);
}

const resultDir = (): string => path.join(dir, "results");
const outputDir = (id: number): string => path.join(resultDir(), String(id), MODEL);
const readRecordAt = (folder: string): GenerationRecord => JSON.parse(fs.readFileSync(path.join(folder, "generation.json"), "utf8")) as GenerationRecord;
const readRecord = (id: number): GenerationRecord => readRecordAt(outputDir(id));

function filesUnder(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-generate-"));
  ({ jsonlPath } = await writeTimecodedTaskSet(dir, [3, 4, 5]));
  server = await startOpenAIServer({ requireApiKey: API_KEY, models: [MODEL] });
  server.setReplyFunction((request) => replyFor(request, "v1"));
  savedKey = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = API_KEY;
  vi.spyOn(console, "error").mockImplementation(() => undefined);
});

afterAll(async () => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
  vi.restoreAllMocks();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  process.exitCode = undefined;
});

describe("iwr generate", () => {
  it("writes index.html and generation.json per task, records a reply without HTML, goes on, and exits 1 for the failed task", async () => {
    expect(await cli("--result", resultDir(), "--workers", "2")).toBe(1);
    expect(server.chatRequests()).toHaveLength(3);
    expect(server.requests.filter((request) => request.path.endsWith("/models"))).toHaveLength(1);

    const failed = readRecord(1);
    expect(failed.status).toBe("failed");
    expect(failed.error?.code).toBe("MODEL_REPLY");
    expect(failed.reply?.text).toBe("I cannot do that (v1).");
    expect(fs.existsSync(path.join(outputDir(1), "index.html"))).toBe(false);

    for (const id of [2, 3]) {
      const record = readRecord(id);
      expect(record.status).toBe("generated");
      expect(record.images).toEqual({ sheets: 1, frames: id + 2, framesDropped: 0, maxImages: 70, maxFrames: 64 });
      expect(record.prompt).toEqual({
        name: "generate",
        hash: createHash("sha256")
          .update(fs.readFileSync(path.join(PROMPTS_DIR, "generate.md")))
          .digest("hex"),
      });
      expect(record.reply?.cacheHit).toBe(false);
      expect(record.reply?.usage.inputTokens).toBeGreaterThan(0);
      expect(record.model.name).toBe(MODEL);
      expect(record.model.temperature).toBe(0);
      const page = fs.readFileSync(path.join(outputDir(id), "index.html"), "utf8");
      expect(page).toContain(`data-images="${id + 3}"`);
      expect(page).toContain('src="../../../fixture/' + id + "/" + TASK_FILES.assetsDir + '/001.png"');
    }
    // Secrets never reach a file: not the results, not the cache.
    const written = [...filesUnder(resultDir()), ...filesUnder(path.join(dir, "cache"))];
    expect(written.length).toBeGreaterThanOrEqual(8);
    for (const file of written) expect(fs.readFileSync(file, "utf8")).not.toContain(API_KEY);
    expect(server.chatRequests()[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("skips pages made by the same request on a rerun, and a replay of the cache sends no request at all", async () => {
    const pageBefore = fs.readFileSync(path.join(outputDir(2), "index.html"), "utf8");
    const recordBefore = readRecord(2);
    const chatBefore = server.chatRequests().length;
    // Task 1 is tried again (no page) and fails again: exit 1.
    expect(await cli("--result", resultDir())).toBe(1);
    // Tasks 2 and 3 had pages; task 1 was retried and answered from the cache.
    expect(server.chatRequests()).toHaveLength(chatBefore);
    expect(readRecord(2)).toEqual(recordBefore);
    expect(fs.readFileSync(path.join(outputDir(2), "index.html"), "utf8")).toBe(pageBefore);
    expect(readRecord(1).reply?.cacheHit).toBe(true);

    const allBefore = server.requests.length;
    expect(await cli("--result", resultDir(), "--force", "--cache", "replay")).toBe(1);
    expect(server.requests).toHaveLength(allBefore);
    expect(readRecord(2).reply?.cacheHit).toBe(true);
    expect(readRecord(2).startedAt).not.toBe(recordBefore.startedAt);
  });

  it("regenerates with --force, only the tasks given by --ids", async () => {
    server.setReplyFunction((request) => replyFor(request, "v2"));
    const chatBefore = server.chatRequests().length;
    expect(await cli("--result", resultDir(), "--force", "--cache", "off", "--ids", "2,3")).toBe(0);
    expect(server.chatRequests().length - chatBefore).toBe(2);
    expect(fs.readFileSync(path.join(outputDir(3), "index.html"), "utf8")).toContain('data-version="v2"');
    expect(readRecord(1).reply?.text).toContain("(v1)");
  });

  it("stops before any work with one clear message when the endpoint is unreachable or the key is missing", async () => {
    const errors = vi.mocked(console.error);
    errors.mockClear();
    const dead = "http://127.0.0.1:9/v1";
    const code = await main(["node", "iwr", "generate", "--data", jsonlPath, "--result", path.join(dir, "dead"), "--model", MODEL, "--base-url", dead]);
    expect(code).toBe(3);
    expect(errors.mock.calls.map((call) => String(call[0])).join("\n")).toMatch(/MODEL: model 'gpt-4o': endpoint http:\/\/127\.0\.0\.1:9\/v1 is not reachable/);
    expect(fs.existsSync(path.join(dir, "dead"))).toBe(false);

    delete process.env.OPENAI_API_KEY;
    try {
      const noKey = await main([
        "node",
        "iwr",
        "generate",
        "--data",
        jsonlPath,
        "--result",
        path.join(dir, "nokey"),
        "--model",
        MODEL,
        "--base-url",
        "https://models.example.test/v1",
      ]);
      expect(noKey).toBe(3);
      expect(String(errors.mock.calls.at(-1)?.[0])).toContain("needs an API key");
      expect(fs.existsSync(path.join(dir, "nokey"))).toBe(false);
    } finally {
      process.env.OPENAI_API_KEY = API_KEY;
    }
  });
});

describe("runGeneration per-task failures", () => {
  it("records an unreadable video, sheets over the cap and a timeout, and still generates the other tasks", async () => {
    const local = fs.mkdtempSync(path.join(dir, "failures-"));
    const set = await writeTimecodedTaskSet(local, [3, 4, 5]);
    const tasks = (await loadTasks(set.jsonlPath)).map((task) => task.inputs);
    fs.writeFileSync(tasks[0]!.videoPath, "not a video at all");
    const hangServer = await startOpenAIServer();
    hangServer.setReplyFunction((request) => (messageParts(request).length === 1 + 1 + 4 ? { hang: true } : replyFor(request, "x")));
    try {
      // The limit applies to every call: wide enough that the answered task finishes on a busy
      // 2-core machine with three workers, short enough that the hanging call still ends the test quickly.
      const spec = loadModelSpec(MODEL, { baseURL: hangServer.baseURL, apiKeyEnv: "none", timeoutMs: 5_000, maxRetries: 0 });
      const results = path.join(local, "results");
      const summary = await runGeneration({ tasks, resultDir: results, spec, cacheMode: "off", workers: 3 });
      expect(summary).toMatchObject({ total: 3, generated: 1, failed: 2, skipped: 0 });
      const record = (id: number): GenerationRecord => readRecordAt(path.join(results, String(id), MODEL));
      expect(record(1).error?.code).toBe("MEDIA");
      expect(record(1).error?.message).toContain(tasks[0]!.videoPath);
      expect(record(2).error?.code).toBe("MODEL");
      expect(record(2).error?.message).toMatch(/no reply within 5 s/);
      expect(record(2).prompt?.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(record(3).status).toBe("generated");

      const capped = loadModelSpec(MODEL, { baseURL: hangServer.baseURL, apiKeyEnv: "none", maxImages: 1 });
      const twoSheets = [{ ...tasks[2]!, assetSheetPaths: [tasks[2]!.assetSheetPaths[0]!, tasks[2]!.assetSheetPaths[0]!] }];
      const over = await runGeneration({ tasks: twoSheets, resultDir: path.join(local, "capped"), spec: capped, cacheMode: "off" });
      expect(over.results[0]?.error?.message).toContain("2 asset sheets exceed the model's image cap of 1");
    } finally {
      await hangServer.close();
    }
  });
});
