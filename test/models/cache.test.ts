/**
 * The response cache through the real client and HTTP path: hits send nothing,
 * replay needs nothing, identical concurrent calls are merged, and no file the
 * run writes holds the API key.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.ts";
import { IwrError } from "../../src/errors.ts";
import { configureLogger } from "../../src/log/logger.ts";
import { type CacheEntry, createModelClient, openResponseCache, sumUsage, usageOfCall } from "../../src/models/index.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";
import { captureWarnings } from "../support/warnings.ts";
import { filesUnder, specFor, TEST_KEY, TEST_KEY_ENV, tempDir, tinyPng, userMessage } from "./helpers.ts";

let server: FakeOpenAIServer;
const dirs: string[] = [];

function cacheDir(): string {
  const dir = tempDir("cache");
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  process.env[TEST_KEY_ENV] = TEST_KEY;
  server = await startOpenAIServer({
    reply: (request) => ({ text: `answer to request #${request.index}`, usage: { prompt_tokens: 500, completion_tokens: 50 } }),
  });
});
afterAll(async () => {
  delete process.env[TEST_KEY_ENV];
  await server.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  server.requests.length = 0;
});

describe("response cache", () => {
  it("answers a rerun from disk with zero requests, carrying the original usage and cost", async () => {
    const dir = cacheDir();
    const spec = specFor(server.baseURL, { pricing: { inputPerMillion: 2, outputPerMillion: 8 } });
    const png = await tinyPng(10, 20, 30);
    const messages = [userMessage("make the page", [png])];

    const first = await createModelClient(spec, { cache: openResponseCache(dir) }).invoke(messages);
    const again = await createModelClient(spec, { cache: openResponseCache(dir) }).invoke([userMessage("make the page", [png])]);

    expect(server.chatRequests()).toHaveLength(1);
    expect(first.cacheHit).toBe(false);
    expect(again).toMatchObject({ text: first.text, usage: first.usage, costUsd: first.costUsd, cacheHit: true, requestHash: first.requestHash });
    const totals = sumUsage([first, again].map((call) => usageOfCall(call)));
    expect(totals).toMatchObject({ calls: 2, cacheHits: 1, inputTokens: 1000, outputTokens: 100 });
    expect(totals.costUsd).toBeCloseTo(2 * first.costUsd, 12);
    expect(totals.spentUsd).toBeCloseTo(first.costUsd, 12);

    // The entry is readable JSON: the image is a hash and a size, not its bytes.
    const file = path.join(dir, "gpt-4o", `${first.requestHash}.json`);
    const entry = JSON.parse(fs.readFileSync(file, "utf8")) as CacheEntry;
    expect(entry.reply.text).toBe(first.text);
    expect(entry.request.messages[0]?.content).toEqual([
      { type: "text", text: "make the page" },
      { type: "image", mimeType: "image/png", sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: png.length },
    ]);
    expect(fs.readFileSync(file, "utf8")).not.toContain(png.toString("base64"));
  });

  it("misses when an image byte, the temperature or the output budget changes", async () => {
    const dir = cacheDir();
    const spec = specFor(server.baseURL);
    const ask = (png: Buffer, overrides = {}) =>
      createModelClient(specFor(server.baseURL, overrides), { cache: openResponseCache(dir) }).invoke([userMessage("same text", [png])]);
    await ask(await tinyPng(1, 1, 1));
    await ask(await tinyPng(1, 1, 2));
    await ask(await tinyPng(1, 1, 1), { temperature: 0.7 });
    await ask(await tinyPng(1, 1, 1), { maxTokens: spec.maxTokens + 1 });
    expect(server.chatRequests()).toHaveLength(4);
    expect(filesUnder(dir)).toHaveLength(4);
  });

  it("replay mode fails clearly on a cold cache, and answers a warm one with no key and no endpoint", async () => {
    const dir = cacheDir();
    const cold = createModelClient(specFor(server.baseURL), { cache: openResponseCache(dir, "replay") });
    const error: unknown = await cold.invoke([userMessage("never asked")]).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(IwrError);
    expect((error as IwrError).code).toBe("CACHE_MISS");
    expect((error as IwrError).message).toMatch(/^replay mode: no cached answer for this gpt-4o request \(key [0-9a-f]{12}…\) in /);
    expect(server.chatRequests()).toHaveLength(0);

    const warmed = await createModelClient(specFor(server.baseURL), { cache: openResponseCache(dir) }).invoke([userMessage("asked once")]);
    const offline = specFor("http://127.0.0.1:9/v1", { apiKeyEnv: "IWR_TEST_UNSET_KEY_VARIABLE" });
    const replayed = await createModelClient(offline, { cache: openResponseCache(dir, "replay") }).invoke([userMessage("asked once")]);
    expect(replayed).toMatchObject({ text: warmed.text, cacheHit: true });
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("sends two identical concurrent requests once", async () => {
    const dir = cacheDir();
    server.enqueue({ text: "shared answer", delayMs: 200 });
    const client = createModelClient(specFor(server.baseURL), { cache: openResponseCache(dir) });
    const [one, two] = await Promise.all([client.invoke([userMessage("twins")]), client.invoke([userMessage("twins")])]);
    expect(server.chatRequests()).toHaveLength(1);
    expect(one.text).toBe("shared answer");
    expect(two.text).toBe("shared answer");
    expect([one.cacheHit, two.cacheHit].sort()).toEqual([false, true]);
  });

  it("never caches a reply its caller does not take as an answer, and moves a stored one aside and asks again", async () => {
    const dir = cacheDir();
    const spec = specFor(server.baseURL);
    const isJson = (text: string) => (text.trim().startsWith("{") ? undefined : "the reply holds no JSON object");
    server.enqueue("Sorry, I cannot help with that.", '{"defects": []}');
    const refused = await createModelClient(spec, { cache: openResponseCache(dir) }).invoke([userMessage("critique")], { accept: isJson });
    // Handed back (the caller records what the model said), but not kept.
    expect(refused.text).toBe("Sorry, I cannot help with that.");
    expect(filesUnder(dir)).toEqual([]);
    const answered = await createModelClient(spec, { cache: openResponseCache(dir) }).invoke([userMessage("critique")], { accept: isJson });
    expect(answered).toMatchObject({ text: '{"defects": []}', cacheHit: false });
    expect(server.chatRequests()).toHaveLength(2);

    // An entry stored without the check (an older run, a caller that took any text): moved aside, asked again.
    server.enqueue("not json", '{"storyboard": 1}');
    await createModelClient(spec, { cache: openResponseCache(dir) }).invoke([userMessage("analyze")]);
    const again = await createModelClient(spec, { cache: openResponseCache(dir) }).invoke([userMessage("analyze")], { accept: isJson });
    expect(again).toMatchObject({ text: '{"storyboard": 1}', cacheHit: false });
    expect(filesUnder(dir).filter((file) => file.endsWith(".corrupt"))).toHaveLength(1);
    expect(server.chatRequests()).toHaveLength(4);
  });

  it("moves a truncated entry aside with a warning naming it, and fetches the answer again", async () => {
    const dir = cacheDir();
    const spec = specFor(server.baseURL);
    const first = await createModelClient(spec, { cache: openResponseCache(dir) }).invoke([userMessage("truncate me")]);
    const file = path.join(dir, "gpt-4o", `${first.requestHash}.json`);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").slice(0, 50));
    const warnings = captureWarnings();
    try {
      const again = await createModelClient(spec, { cache: openResponseCache(dir) }).invoke([userMessage("truncate me")]);
      expect(again.cacheHit).toBe(false);
      expect(fs.existsSync(`${file}.corrupt`)).toBe(true);
      expect(JSON.parse(fs.readFileSync(file, "utf8")).reply.text).toBe(again.text);
      expect((await warnings.messages()).some((message) => message.includes(file) && message.includes("moved aside"))).toBe(true);
    } finally {
      warnings.stop();
    }
  });

  it("mode off sends every call and writes nothing", async () => {
    const dir = cacheDir();
    const client = createModelClient(specFor(server.baseURL), { cache: openResponseCache(dir, "off") });
    await client.invoke([userMessage("again and again")]);
    await client.invoke([userMessage("again and again")]);
    expect(server.chatRequests()).toHaveLength(2);
    expect(filesUnder(dir)).toHaveLength(0);
  });

  it("writes the API key into no file: not the cache entries, not the log", async () => {
    const dir = cacheDir();
    const logFile = path.join(cacheDir(), "run.log");
    configureLogger({ level: "debug", file: logFile, silentConsole: true });
    server.enqueue({ status: 500 }, "answer after a retry");
    const client = createModelClient(specFor(server.baseURL), { cache: openResponseCache(dir) });
    // A careless prompt that quotes the key: the stored copy must still not contain it.
    await client.invoke([userMessage(`debug info: key=${TEST_KEY}`)]);
    const strict = await startOpenAIServer({ requireApiKey: "sk-the-right-key-000000" });
    await createModelClient(specFor(strict.baseURL), { cache: openResponseCache(dir) })
      .invoke([userMessage("refused")])
      .catch(() => undefined);
    await strict.close();

    await vi.waitFor(() => expect(fs.readFileSync(logFile, "utf8")).toContain("HTTP 500 on attempt 1"), { timeout: 5000 });
    const written = [...filesUnder(dir), logFile];
    expect(written.length).toBeGreaterThanOrEqual(2);
    for (const file of written) expect(fs.readFileSync(file, "utf8"), file).not.toContain(TEST_KEY);
    expect(server.chatRequests().every((request) => request.headers.authorization === `Bearer ${TEST_KEY}`)).toBe(true);
  });

  it("`iwr cache stats` counts entries per model and `iwr cache clear --model` removes only that model's", async () => {
    const dir = cacheDir();
    await createModelClient(specFor(server.baseURL, { name: "gpt-4o" }), { cache: openResponseCache(dir) }).invoke([userMessage("a")]);
    await createModelClient(specFor(server.baseURL, { name: "Qwen/Qwen2.5-VL-7B" }), { cache: openResponseCache(dir) }).invoke([userMessage("b")]);
    await createModelClient(specFor(server.baseURL, { name: "Qwen/Qwen2.5-VL-7B" }), { cache: openResponseCache(dir) }).invoke([userMessage("c")]);
    fs.writeFileSync(path.join(dir, "gpt-4o", "notes.txt"), "mine");

    const printed: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)));
    try {
      expect(await main(["node", "iwr", "cache", "stats", "--dir", dir, "--json"])).toBe(0);
      const stats = JSON.parse(printed.join("\n")) as { entries: number; bytes: number; models: Array<{ model: string; entries: number }> };
      expect(stats.entries).toBe(3);
      expect(stats.bytes).toBeGreaterThan(0);
      expect(stats.models.map((model) => [model.model, model.entries])).toEqual([
        ["gpt-4o", 1],
        ["qwen__qwen2.5-vl-7b", 2],
      ]);

      printed.length = 0;
      expect(await main(["node", "iwr", "cache", "clear", "--dir", dir, "--model", "Qwen/Qwen2.5-VL-7B"])).toBe(0);
      expect(printed.join("\n")).toContain("removed 2 entries of model Qwen/Qwen2.5-VL-7B");
      expect(fs.existsSync(path.join(dir, "qwen__qwen2.5-vl-7b"))).toBe(false);

      expect(await main(["node", "iwr", "cache", "clear", "--dir", dir])).toBe(0);
      expect(filesUnder(dir).map((file) => path.relative(dir, file))).toEqual([path.join("gpt-4o", "notes.txt")]);
    } finally {
      spy.mockRestore();
    }
  });
});
