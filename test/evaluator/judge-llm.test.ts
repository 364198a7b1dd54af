/**
 * The model assertion judge against a local OpenAI-compatible server: the request
 * (prompt, before/after images in order, temperature 0), the reply parse fallbacks,
 * and what happens to unparsable, empty and failing replies.
 */

import sharp from "sharp";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLlmJudge } from "../../src/evaluator/judge/llm.ts";
import { parseJudgeReply } from "../../src/evaluator/judge/parse-reply.ts";
import type { AssertionInput } from "../../src/evaluator/judge/types.ts";
import { createModelClient, ModelSpecSchema } from "../../src/models/index.ts";
import { type FakeOpenAIServer, messageParts, startOpenAIServer } from "../support/openai-server.ts";

let server: FakeOpenAIServer;
let input: AssertionInput;

async function png(r: number, g: number, b: number): Promise<Buffer> {
  return sharp({ create: { width: 8, height: 6, channels: 3, background: { r, g, b } } })
    .png()
    .toBuffer();
}

beforeAll(async () => {
  server = await startOpenAIServer();
  input = {
    actionIndex: 2,
    actionType: "Click",
    actionDescription: "the 'Add' button",
    assertion: "A new item 'Milk' appears in the list",
    before: await png(255, 255, 255),
    after: await png(0, 0, 0),
  };
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

function judge(maxAttempts = 3) {
  // No client-side retries: the judge's own attempts are what is under test.
  const spec = ModelSpecSchema.parse({ name: "gpt-4o", baseURL: server.baseURL, apiKeyEnv: "none", maxRetries: 0, timeoutMs: 10_000, retryBaseDelayMs: 0 });
  return createLlmJudge({ client: createModelClient(spec), maxAttempts });
}

function imageUrls(index: number): string[] {
  return messageParts(server.chatRequests()[index]!, 0)
    .filter((part) => part.type === "image_url")
    .map((part) => String((part as { image_url: { url: string } }).image_url.url));
}

describe("llm assertion judge", () => {
  it("sends the assertion with the before and after screenshots, in that order, at temperature 0", async () => {
    server.enqueue('{"think": "the list grew by one row", "result": "Yes"}');
    const verdict = await judge().judge(input);
    expect(verdict).toMatchObject({ result: "Yes", think: "the list grew by one row", attempts: 1 });
    expect(verdict.failure).toBeUndefined();
    const request = server.chatRequests()[0]!;
    expect(request.body?.temperature).toBe(0);
    const text = messageParts(request).find((part) => part.type === "text");
    expect(String((text as { text: string }).text)).toContain("A new item 'Milk' appears in the list");
    expect(imageUrls(0)).toEqual([`data:image/png;base64,${input.before.toString("base64")}`, `data:image/png;base64,${input.after.toString("base64")}`]);
  });

  it("reads a fenced JSON answer and a bare word", async () => {
    server.enqueue('Here you go:\n```json\n{"think": "no new row", "result": "No"}\n```');
    expect((await judge().judge(input)).result).toBe("No");
    server.enqueue("Yes.");
    expect((await judge().judge(input)).result).toBe("Yes");
  });

  it("asks again after an unparsable reply, and records every raw reply when none can be read", async () => {
    server.enqueue("The screenshots look nice.", { empty: true }, "Hard to say; maybe or maybe not.");
    const verdict = await judge(3).judge(input);
    expect(verdict.result).toBe("No");
    expect(verdict.attempts).toBe(3);
    expect(verdict.failure?.kind).toBe("unparsable");
    expect(verdict.replies).toEqual(["The screenshots look nice.", "", "Hard to say; maybe or maybe not."]);
    expect(server.chatRequests()).toHaveLength(3);
    // A retry reminds the model of the format (so it is a different request, not a cache hit).
    const retryMessages = server.chatRequests()[1]!.body?.messages ?? [];
    expect(retryMessages).toHaveLength(3);
    expect(JSON.stringify(retryMessages.at(-1))).toContain("could not be read");
    expect(JSON.stringify(server.chatRequests()[2]!.body?.messages.at(-1))).toContain("could not be read");
    // The images of the question are sent again with every attempt.
    expect(imageUrls(2)).toHaveLength(2);
  });

  it("gets a good answer on a later attempt", async () => {
    server.enqueue("hmm", '{"think": "row added", "result": "Yes"}');
    const verdict = await judge().judge(input);
    expect(verdict).toMatchObject({ result: "Yes", attempts: 2, replies: ["hmm", '{"think": "row added", "result": "Yes"}'] });
  });

  it("retries an HTTP 500, then records the failure as the step's No", async () => {
    server.enqueue({ status: 500, message: "upstream exploded" }, { status: 500, message: "upstream exploded" });
    const verdict = await judge(2).judge(input);
    expect(server.chatRequests()).toHaveLength(2);
    expect(verdict.result).toBe("No");
    expect(verdict.failure?.kind).toBe("http");
    expect(verdict.replies).toHaveLength(2);
    expect(verdict.replies[0]).toMatch(/request failed.*500/s);
  });
});

describe("parseJudgeReply", () => {
  it("follows the benchmark's fallbacks", () => {
    expect(parseJudgeReply('{"think":"ok","result":"Yes"}')).toMatchObject({ result: "Yes", via: "json" });
    expect(parseJudgeReply('```json\n{"result": "no"}\n```')).toMatchObject({ result: "No", via: "fenced-json" });
    expect(parseJudgeReply('Thinking... {"think": "x", "result": "Yes"} done')).toMatchObject({ result: "Yes", via: "embedded-json" });
    expect(parseJudgeReply('"result": "No" because the row is missing')).toMatchObject({ result: "No", via: "words" });
    expect(parseJudgeReply("No")).toMatchObject({ result: "No", via: "words" });
    expect(parseJudgeReply("yes or no, who knows")).toBeUndefined();
    expect(parseJudgeReply("   ")).toBeUndefined();
  });

  it("takes only an exact yes/no word as the verdict, ignoring case and punctuation", () => {
    expect(parseJudgeReply('{"result":"No."}')).toMatchObject({ result: "No", via: "json" });
    expect(parseJudgeReply('{"result":"Yes!"}')).toMatchObject({ result: "Yes", via: "json" });
    expect(parseJudgeReply('{"result":" YES "}')).toMatchObject({ result: "Yes", via: "json" });
    expect(parseJudgeReply("No.")).toMatchObject({ result: "No", via: "words" });
    expect(parseJudgeReply("Yes!")).toMatchObject({ result: "Yes", via: "words" });
    expect(parseJudgeReply('{"result":"none of the above"}')).toBeUndefined();
    expect(parseJudgeReply('{"result":"not sure"}')).toBeUndefined();
    expect(parseJudgeReply('{"result":"nothing changed"}')).toBeUndefined();
    expect(parseJudgeReply('{"result":"yesterday"}')).toBeUndefined();
    expect(parseJudgeReply("none of the above")).toBeUndefined();
  });
});
