/**
 * The MLLM visual judge: the benchmark's score parse, the prompt and image order it
 * sends (through the real model client to a local OpenAI-compatible server), and the
 * labelled offline stand-in.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createModelJudge, createOfflineProxyJudge, offlineProxyScore, parseJudgeScore } from "../../src/evaluator/mllm-judge.ts";
import { createClientJudge } from "../../src/evaluator/mllm-judge-client.ts";
import { createModelClient, ModelSpecSchema } from "../../src/models/index.ts";
import { PROMPTS_DIR } from "../../src/prompts/template.ts";
import { solidPng } from "../support/evaluator-images.ts";
import { type FakeOpenAIServer, messageParts, startOpenAIServer } from "../support/openai-server.ts";

const promptHash = createHash("sha256")
  .update(fs.readFileSync(path.join(PROMPTS_DIR, "judge-visual.md")))
  .digest("hex");

describe("parseJudgeScore (the harness's regex)", () => {
  it("reads the first 'Score: N/100', case-insensitive, clipped to 100", () => {
    expect(parseJudgeScore("Comments:\n- Layout (10 points): fine; 8\n\nScore: 85/100")).toBe(85);
    expect(parseJudgeScore("final score: 7/100")).toBe(7);
    expect(parseJudgeScore("Score: 40/100 then later Score: 90/100")).toBe(40);
    expect(parseJudgeScore("Score: 150/100")).toBe(100);
  });

  it("finds nothing without a 'N/100' right after 'Score:' on the same line", () => {
    expect(parseJudgeScore("I would give it 85 out of 100")).toBeNull();
    expect(parseJudgeScore("Score: 85 / 100")).toBeNull();
    expect(parseJudgeScore("Score:\n85/100")).toBeNull();
  });
});

describe("model judge", () => {
  it("sends the rubric prompt with the reference first, keeps unparsable replies and scores them 0", async () => {
    const calls: { prompt: string; images: readonly Buffer[] }[] = [];
    const replies = ["Comments: close.\nScore: 72/100", "I cannot judge this."];
    const judge = createModelJudge({
      modelName: "scripted-judge",
      call: async (prompt, images) => {
        calls.push({ prompt, images });
        return replies.shift() ?? "";
      },
    });
    expect(judge.info).toEqual({ kind: "model", name: "scripted-judge", promptHash });
    const reference = await solidPng(64, 64, [255, 0, 0]);
    const candidate = await solidPng(64, 64, [0, 0, 255]);
    expect(await judge.judge({ reference, candidate, ocrSimilarity: 0, visualSimilarity: 0 })).toEqual({
      score: 72,
      parsed: true,
      reply: "Comments: close.\nScore: 72/100",
    });
    expect(await judge.judge({ reference, candidate, ocrSimilarity: 0, visualSimilarity: 0 })).toEqual({
      score: 0,
      parsed: false,
      reply: "I cannot judge this.",
    });
    const first = calls[0];
    expect(first?.images).toEqual([reference, candidate]);
    for (const part of [
      "Layout (10 points)",
      "Elements (15 points)",
      "Content and Text (40 points)",
      "Style (15 points)",
      "Overall (20 points)",
      "Score: <total>/100",
    ]) {
      expect(first?.prompt).toContain(part);
    }
  });
});

describe("client judge over HTTP", () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("sends one user message: prompt text, then reference and candidate as PNG data URLs", async () => {
    server.enqueue("Comments: nearly identical.\nScore: 91/100");
    const spec = ModelSpecSchema.parse({ name: "judge-model", baseURL: server.baseURL, apiKeyEnv: "none", maxRetries: 0 });
    const judge = createClientJudge(createModelClient(spec));
    const reference = await solidPng(32, 32, [255, 255, 255]);
    const candidate = await solidPng(32, 32, [0, 0, 0]);
    const judgement = await judge.judge({ reference, candidate, ocrSimilarity: 0, visualSimilarity: 0 });
    expect(judgement).toMatchObject({ score: 91, parsed: true });
    expect(judge.info).toEqual({ kind: "model", name: "judge-model", promptHash });
    const request = server.requests.find((entry) => entry.path.endsWith("/chat/completions"));
    expect(request?.body?.temperature).toBe(0);
    const parts = request ? messageParts(request) : [];
    expect(parts.map((part) => part.type)).toEqual(["text", "image_url", "image_url"]);
    const urls = parts.flatMap((part) => (part.type === "image_url" && "image_url" in part ? [(part.image_url as { url: string }).url] : []));
    expect(urls).toEqual([`data:image/png;base64,${reference.toString("base64")}`, `data:image/png;base64,${candidate.toString("base64")}`]);
  });
});

describe("offline proxy", () => {
  it("is round(100·(OCR + visual)/2) and labelled as the proxy", async () => {
    expect(offlineProxyScore(0.8, 0.5)).toBe(65);
    expect(offlineProxyScore(1, 1)).toBe(100);
    const judge = createOfflineProxyJudge();
    expect(judge.info).toEqual({ kind: "offline-proxy", name: "offline-proxy" });
    const png = await solidPng(8, 8, [0, 0, 0]);
    const judgement = await judge.judge({ reference: png, candidate: png, ocrSimilarity: 0.25, visualSimilarity: 0.5 });
    expect(judgement.score).toBe(38);
    expect(judgement.reply).toContain("offline-proxy");
  });
});
