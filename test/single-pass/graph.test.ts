import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { runSinglePass } from "../../agents/single-pass/index.ts";
import type { SinglePassInput } from "../../agents/single-pass/state.ts";
import { createModelClient, loadModelSpec, type ModelSpecInput } from "../../src/models/index.ts";
import { loadPrompt } from "../../src/prompts/template.ts";
import type { TaskInputs } from "../../src/tasks/inputs.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { type FakeOpenAIServer, messageParts, startOpenAIServer } from "../support/openai-server.ts";
import { secondShownBy, writeTimecodedTaskSet } from "../support/single-pass-videos.ts";

let dir: string;
let server: FakeOpenAIServer;
let shortTask: Task; // 10 s video, 2 sheets
let longTask: Task; // 100 s video, 2 sheets

const PAGE_REPLY =
  'Sure.\n```html\n<!DOCTYPE html><html><body><img class="btn" src="__PLACEHOLDER_ASSETS_BASE_DIR__/001.png" width="32" height="32"></body></html>\n```\n';

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-single-pass-"));
  const set = await writeTimecodedTaskSet(dir, [10, 100], { sheetCount: 2 });
  [shortTask, longTask] = (await loadTasks(set.jsonlPath)) as [Task, Task];
  server = await startOpenAIServer();
});

afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  server.requests.length = 0;
});

function client(preset = "gpt-4o", overrides: Partial<ModelSpecInput> = {}) {
  return createModelClient(loadModelSpec(preset, { baseURL: server.baseURL, apiKeyEnv: "none", ...overrides }));
}

function imageBytes(url: string): Buffer {
  const match = /^data:image\/png;base64,(.*)$/.exec(url);
  if (!match?.[1]) throw new Error(`not a PNG data URL: ${url.slice(0, 40)}`);
  return Buffer.from(match[1], "base64");
}

describe("single-pass graph", () => {
  it("sends one user message: the prompt, then the sheets, then 10 frames in time order", async () => {
    server.enqueue(PAGE_REPLY);
    const outputDir = path.join(dir, "results", String(shortTask.id), "gpt-4o");
    const outcome = await runSinglePass(shortTask.inputs, { model: client(), outputDir });

    const [request] = server.chatRequests();
    expect(server.chatRequests()).toHaveLength(1);
    expect(request!.body!.messages).toHaveLength(1);
    expect(request!.body!.messages[0]!.role).toBe("user");
    expect(request!.body!.temperature).toBe(0);
    expect(request!.body!.max_tokens).toBe(16_384);
    const parts = messageParts(request!);
    expect(parts).toHaveLength(1 + 2 + 10);
    expect(parts[0]).toEqual({ type: "text", text: outcome.state.prompt!.text });
    expect(outcome.state.prompt!.text).toContain("160x90");
    expect(outcome.state.prompt!.hash).toBe(loadPrompt("generate").hash);
    const urls = parts.slice(1).map((part) => (part as { image_url: { url: string } }).image_url.url);
    // Sheets first, byte for byte the task's files, in order.
    for (const [i, sheet] of shortTask.inputs.assetSheetPaths.entries()) expect(imageBytes(urls[i]!).equals(fs.readFileSync(sheet))).toBe(true);
    // Then the frames, one per second of video.
    expect(await Promise.all(urls.slice(2).map((url) => secondShownBy(imageBytes(url))))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    expect(outcome.failure).toBeUndefined();
    expect(outcome.state.imageCounts).toEqual({ sheets: 2, frames: 10, framesDropped: 0 });
    const assets = path.relative(outputDir, shortTask.inputs.assetsDir).split(path.sep).join("/");
    expect(outcome.html).toContain(`src="${assets}/001.png"`);
    expect(outcome.html).not.toContain("__PLACEHOLDER_ASSETS_BASE_DIR__");
  });

  it("sends 64 frames of a 100 s video beside the sheets, and fewer under a preset with 20 images", async () => {
    server.enqueue(PAGE_REPLY, PAGE_REPLY);
    const full = await runSinglePass(longTask.inputs, { model: client(), outputDir: dir });
    expect(messageParts(server.chatRequests()[0]!)).toHaveLength(1 + 2 + 64);
    expect(full.state.imageCounts).toEqual({ sheets: 2, frames: 64, framesDropped: 0 });

    const small = await runSinglePass(longTask.inputs, { model: client("qwen2.5-vl-7b"), outputDir: dir });
    const request = server.chatRequests()[1]!;
    expect(messageParts(request)).toHaveLength(1 + 20);
    expect(request.body!.max_tokens).toBe(4096);
    expect(small.state.imageCounts).toEqual({ sheets: 2, frames: 18, framesDropped: 0 });
    // The 18 frames still span the whole recording.
    const last = messageParts(request).at(-1) as { image_url: { url: string } };
    expect(await secondShownBy(imageBytes(last.image_url.url))).toBeGreaterThanOrEqual(90);
  });

  it("takes TaskInputs only: nothing of the truth reaches the model", async () => {
    expectTypeOf<Parameters<typeof runSinglePass>[0]>().toEqualTypeOf<TaskInputs>();
    expectTypeOf<keyof typeof SinglePassInput.State>().toEqualTypeOf<"inputs">();

    server.enqueue(PAGE_REPLY);
    // Even a caller that smuggles the whole task in at run time gets only the inputs through.
    const smuggled = { ...shortTask.inputs, truth: shortTask.truth, line: shortTask.line };
    await runSinglePass(smuggled, { model: client(), outputDir: dir });
    const body = JSON.stringify(server.chatRequests()[0]!.body);
    const secrets = shortTask.truth.actions.flatMap((action) => [action.parameters.description, action.logical_assertion].filter((text) => text.length > 0));
    expect(secrets.length).toBeGreaterThan(3);
    for (const secret of secrets) expect(body).not.toContain(secret);
    expect(body).not.toContain("checkpoints");
  });

  it("records a reply without HTML as a failure and keeps the raw reply", async () => {
    server.enqueue("I am sorry, I cannot rebuild this page.");
    const outcome = await runSinglePass(shortTask.inputs, { model: client(), outputDir: dir });
    expect(outcome.html).toBeUndefined();
    expect(outcome.failure?.code).toBe("MODEL_REPLY");
    expect(outcome.failure?.message).toMatch(/^reply contains no HTML/);
    expect(outcome.state.reply?.text).toBe("I am sorry, I cannot rebuild this page.");
  });

  it("fails a task whose sheets exceed the image cap before calling the model", async () => {
    const outcome = await runSinglePass(shortTask.inputs, { model: client("gpt-4o", { maxImages: 1 }), outputDir: dir });
    expect(outcome.failure?.code).toBe("MEDIA");
    expect(outcome.failure?.message).toContain("2 asset sheets exceed the model's image cap of 1");
    expect(server.chatRequests()).toHaveLength(0);
  });
});
