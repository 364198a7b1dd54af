/** The client with an injected LangChain chat model (no endpoint): answers, cache and errors still apply. */
import fs from "node:fs";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { afterAll, describe, expect, it } from "vitest";
import { createModelClient, loadModelSpec, openResponseCache } from "../../src/models/index.ts";
import { tempDir, tinyPng, userMessage } from "./helpers.ts";

const dir = tempDir("injected");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("model client with an injected chat model", () => {
  it("returns the model's answers in order and replays them from the cache", async () => {
    // No key and no endpoint exist for this name: an injected model needs neither.
    const spec = loadModelSpec("injected-test-model", { apiKeyEnv: "IWR_TEST_UNSET_KEY_VARIABLE", baseURLEnv: "IWR_TEST_UNSET_URL_VARIABLE" });
    const png = await tinyPng(9, 9, 9);
    const fake = new FakeListChatModel({ responses: ["<html>first</html>", "<html>second</html>"] });
    const client = createModelClient(spec, { chatModel: fake, cache: openResponseCache(dir) });

    const first = await client.invoke([userMessage("page one", [png])]);
    const second = await client.invoke([userMessage("page two", [png])]);
    expect([first.text, second.text]).toEqual(["<html>first</html>", "<html>second</html>"]);
    expect(first).toMatchObject({ cacheHit: false, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0 });

    const replayClient = createModelClient(spec, { chatModel: new FakeListChatModel({ responses: ["never used"] }), cache: openResponseCache(dir, "replay") });
    const replayed = await replayClient.invoke([userMessage("page one", [png])]);
    expect(replayed).toMatchObject({ text: "<html>first</html>", cacheHit: true, requestHash: first.requestHash });
  });

  it("reports an empty answer from any model as MODEL_REPLY", async () => {
    const client = createModelClient(loadModelSpec("injected-test-model"), { chatModel: new FakeListChatModel({ responses: ["   "] }) });
    await expect(client.invoke([userMessage("say nothing")])).rejects.toMatchObject({
      code: "MODEL_REPLY",
      message: "model 'injected-test-model' at injected chat model answered with empty content",
    });
  });
});
