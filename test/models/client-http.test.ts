/**
 * The model client over the real ChatOpenAI → HTTP path, against a local
 * OpenAI-compatible server: what goes on the wire, retries, timeouts, limits.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { createModelClient, type ModelClient } from "../../src/models/index.ts";
import { classifyFailure } from "../../src/models/retry.ts";
import { type FakeOpenAIServer, messageParts, startOpenAIServer } from "../support/openai-server.ts";
import { dataURL, specFor, TEST_KEY, TEST_KEY_ENV, tinyPng, userMessage } from "./helpers.ts";

let server: FakeOpenAIServer;

beforeAll(async () => {
  process.env[TEST_KEY_ENV] = TEST_KEY;
  server = await startOpenAIServer();
});
afterAll(async () => {
  delete process.env[TEST_KEY_ENV];
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

async function failureOf(client: ModelClient, text: string): Promise<IwrError> {
  const error: unknown = await client.invoke([userMessage(text)]).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(IwrError);
  return error as IwrError;
}

describe("model client over HTTP", () => {
  it("sends the text part then the image parts in order, temperature 0, the configured max_tokens and the key", async () => {
    const images = [await tinyPng(255, 0, 0), await tinyPng(0, 255, 0), await tinyPng(0, 0, 255)];
    server.enqueue({ text: "<html>ok</html>", usage: { prompt_tokens: 1000, completion_tokens: 200 } });
    const client = createModelClient(specFor(server.baseURL, { pricing: { inputPerMillion: 2.5, outputPerMillion: 10 } }));

    const result = await client.invoke([userMessage("rebuild this page", images)]);

    expect(result.text).toBe("<html>ok</html>");
    expect(result.usage).toEqual({ inputTokens: 1000, outputTokens: 200 });
    expect(result.costUsd).toBeCloseTo((1000 * 2.5 + 200 * 10) / 1e6, 12);
    expect(result.cacheHit).toBe(false);
    expect(result.requestHash).toMatch(/^[0-9a-f]{64}$/);
    const [request] = server.chatRequests();
    expect(request?.body?.model).toBe("gpt-4o");
    expect(request?.body?.temperature).toBe(0);
    expect(request?.body?.max_tokens).toBe(1234);
    expect(request?.body?.stream).toBe(false);
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    const parts = request ? messageParts(request) : [];
    expect(parts.map((part) => part.type)).toEqual(["text", "image_url", "image_url", "image_url"]);
    expect(parts[0]).toEqual({ type: "text", text: "rebuild this page" });
    expect(parts.slice(1).map((part) => ("image_url" in part ? (part.image_url as { url: string }).url : ""))).toEqual(images.map(dataURL));
  });

  it("sends no temperature when the spec says null (reasoning models) and max_completion_tokens for gpt-5", async () => {
    server.enqueue("fine");
    await createModelClient(specFor(server.baseURL, { name: "gpt-5", temperature: null })).invoke([userMessage("hi")]);
    const body = server.chatRequests()[0]?.body;
    expect(body && "temperature" in body).toBe(false);
    expect(body?.max_completion_tokens).toBe(1234);
  });

  it("retries a 500 once and succeeds", async () => {
    server.enqueue({ status: 500 }, "second time lucky");
    const result = await createModelClient(specFor(server.baseURL)).invoke([userMessage("retry me")]);
    expect(result.text).toBe("second time lucky");
    expect(server.chatRequests()).toHaveLength(2);
  });

  it("retries a connection dropped before the answer or in the middle of it, like a 5xx", async () => {
    server.enqueue({ drop: "before-headers" }, { drop: "mid-body" }, "third time lucky");
    const result = await createModelClient(specFor(server.baseURL, { maxRetries: 2, retryBaseDelayMs: 0 })).invoke([userMessage("flaky proxy")]);
    expect(result.text).toBe("third time lucky");
    expect(server.chatRequests()).toHaveLength(3);
  });

  it("gives up on connections that keep dropping after maxRetries, as a connection failure naming the attempts", async () => {
    server.enqueue({ drop: "mid-body" }, { drop: "mid-body" });
    const error = await failureOf(createModelClient(specFor(server.baseURL, { maxRetries: 1, retryBaseDelayMs: 0 })), "always cut");
    expect(error.code).toBe("MODEL");
    expect(error.message).toMatch(/the connection failed or dropped after 2 attempts/);
    expect(server.chatRequests()).toHaveLength(2);
  });

  it("waits what retry-after asks on a 429", async () => {
    server.enqueue({ status: 429, retryAfter: 1 }, "after the wait");
    const result = await createModelClient(specFor(server.baseURL, { retryBaseDelayMs: 0 })).invoke([userMessage("rate limited")]);
    expect(result.text).toBe("after the wait");
    const [first, second] = server.chatRequests();
    expect(second!.receivedAtMs - first!.receivedAtMs).toBeGreaterThanOrEqual(950);
  });

  it("gives up after maxRetries with a message naming the model, endpoint and status", async () => {
    server.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
    const error = await failureOf(createModelClient(specFor(server.baseURL, { maxRetries: 2 })), "always down");
    expect(error.code).toBe("MODEL");
    expect(error.message).toContain("model 'gpt-4o' at http://127.0.0.1:");
    expect(error.message).toContain("HTTP 503");
    expect(error.message).toContain("after 3 attempts");
    expect(server.chatRequests()).toHaveLength(3);
  });

  it("fails at once on 400 and 401 without retrying, and keeps the echoed key out of the message", async () => {
    server.enqueue({ status: 400, message: "image too large" });
    const badRequest = await failureOf(createModelClient(specFor(server.baseURL)), "bad");
    expect(badRequest.message).toMatch(/HTTP 400, the endpoint rejected the request: .*image too large/);
    expect(server.chatRequests()).toHaveLength(1);

    const strict = await startOpenAIServer({ requireApiKey: "sk-the-right-key-000000" });
    try {
      const refused = await failureOf(createModelClient(specFor(strict.baseURL)), "wrong key");
      expect(refused.message).toContain(`HTTP 401, the API key was refused (check ${TEST_KEY_ENV})`);
      expect(refused.message).not.toContain(TEST_KEY);
      expect(strict.chatRequests()).toHaveLength(1);
    } finally {
      await strict.close();
    }
  });

  it("times out a server that never answers, with a clear error and no retry", async () => {
    server.enqueue({ hang: true });
    const started = Date.now();
    const error = await failureOf(createModelClient(specFor(server.baseURL, { timeoutMs: 1500 })), "hang");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error.code).toBe("MODEL");
    expect(error.message).toContain("no reply within 1.5 s");
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("ends a reply whose body stalls after the headers at the idle limit, and does not retry it", async () => {
    server.enqueue({ stall: "body" });
    const started = Date.now();
    const error = await failureOf(createModelClient(specFor(server.baseURL, { timeoutMs: 60_000 }), { idleBodyMs: 800 }), "stall");
    expect(Date.now() - started).toBeLessThan(4000);
    expect(error.code).toBe("MODEL");
    expect(error.message).toContain("no byte of the reply for 800 ms after its headers (a stalled reply); the call was not retried");
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("ends a reply that trickles a byte at a time at the call's deadline (timeoutMs), not retried", async () => {
    server.enqueue({ stall: "body", trickleMs: 100 });
    const started = Date.now();
    const error = await failureOf(createModelClient(specFor(server.baseURL, { timeoutMs: 1500 }), { idleBodyMs: 1000 }), "trickle");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(Date.now() - started).toBeLessThan(4500);
    expect(error.message).toContain("no reply within 1.5 s (timeoutMs); the call was not retried");
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("refuses a reply larger than max_tokens allows, without retrying it", async () => {
    // 1234 tokens at most: a 20 MB answer cannot be one, whatever it holds.
    server.enqueue({ text: "<p>echo</p>".repeat(2_000_000) });
    const error = await failureOf(createModelClient(specFor(server.baseURL)), "huge");
    expect(error.code).toBe("MODEL_REPLY");
    expect(error.message).toMatch(/the reply is larger than max_tokens 1234 allows \(over [\d,]+ bytes\); refused/);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("counts undici's own header and body timeouts as timeouts: not retried", () => {
    for (const code of ["UND_ERR_BODY_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT"]) {
      const error = new TypeError("terminated", { cause: Object.assign(new Error("Body Timeout Error"), { code }) });
      expect(classifyFailure(error)).toMatchObject({ kind: "timeout", retryable: false });
    }
  });

  it("stops a call when the caller's signal aborts", async () => {
    server.enqueue({ hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const call = createModelClient(specFor(server.baseURL)).invoke([userMessage("cancel me")], { signal: controller.signal });
    await expect(call).rejects.toMatchObject({ code: "MODEL", message: expect.stringContaining("call cancelled") });
  });

  it("reports a body that is not JSON and an empty answer as MODEL_REPLY", async () => {
    server.enqueue({ garbage: true }, { empty: true, finishReason: "length" });
    const client = createModelClient(specFor(server.baseURL));
    const garbage = await failureOf(client, "garbage please");
    expect(garbage.code).toBe("MODEL_REPLY");
    expect(garbage.message).toContain("not a Chat Completions reply");
    const empty = await failureOf(client, "empty please");
    expect(empty.code).toBe("MODEL_REPLY");
    expect(empty.message).toContain("empty content; finish_reason 'length': the output budget of 1234 tokens ran out");
  });

  it("refuses a request with more images than maxImages before sending it", async () => {
    const png = await tinyPng(1, 2, 3);
    const client = createModelClient(specFor(server.baseURL, { maxImages: 2 }));
    await expect(client.invoke([userMessage("too many", [png, png, png])])).rejects.toThrow("has 3 images; its maxImages is 2");
    expect(server.chatRequests()).toHaveLength(0);
  });

  it("keeps at most `concurrency` requests in flight per endpoint, across clients", async () => {
    const limited = await startOpenAIServer({ reply: () => ({ text: "slow answer", delayMs: 150 }) });
    try {
      const first = createModelClient(specFor(limited.baseURL, { concurrency: 2 }));
      const second = createModelClient(specFor(limited.baseURL, { name: "gpt-4.1", concurrency: 2 }));
      const calls = Array.from({ length: 6 }, (_, index) => (index % 2 === 0 ? first : second).invoke([userMessage(`request ${index}`)]));
      await Promise.all(calls);
      expect(limited.chatRequests()).toHaveLength(6);
      expect(limited.maxInFlight).toBe(2);
    } finally {
      await limited.close();
    }
  });
});
