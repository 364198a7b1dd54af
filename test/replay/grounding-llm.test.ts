/**
 * The benchmark's model grounding against a local OpenAI-compatible server, on a real
 * page's element index and accessibility tree: what the model is shown, how its
 * answers are read, and the vision fallback with a highlighted screenshot.
 */

import type { Page } from "playwright";
import sharp from "sharp";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { accessibilityTreeText, hideHighlights, type InteractiveElement, indexInteractiveElements, showHighlights } from "../../src/browser/element-index.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { createModelClient, ModelSpecSchema } from "../../src/models/index.ts";
import { createLlmGrounder, parseGroundingReply } from "../../src/replay/grounding/llm.ts";
import type { GroundingContext } from "../../src/replay/grounding/types.ts";
import { shoppingListPage } from "../support/evaluator-replay-fixtures.ts";
import { type FakeOpenAIServer, messageParts, startOpenAIServer } from "../support/openai-server.ts";

let server: FakeOpenAIServer;
let page: Page;
let elements: InteractiveElement[];
let screenshots = 0;

beforeAll(async () => {
  server = await startOpenAIServer();
  const browser = await sharedBrowser();
  page = await browser.newPage({ viewport: { width: 640, height: 480 } });
  await page.setContent(shoppingListPage());
  elements = await indexInteractiveElements(page);
});
afterAll(async () => {
  await server.close();
  await page?.close();
  await closeSharedBrowser();
});
afterEach(() => {
  server.requests.length = 0;
});

function grounder() {
  const spec = ModelSpecSchema.parse({ name: "gpt-4o", baseURL: server.baseURL, apiKeyEnv: "none", maxRetries: 0, timeoutMs: 10_000 });
  return createLlmGrounder({ client: createModelClient(spec) });
}

function context(): GroundingContext {
  return {
    elements,
    accessibilityTree: () => accessibilityTreeText(page),
    highlightedScreenshot: async () => {
      screenshots += 1;
      await showHighlights(page, elements);
      try {
        return await page.screenshot();
      } finally {
        await hideHighlights(page);
      }
    },
  };
}

function indexOf(text: string): number {
  const found = elements.find((el) => el.text === text || el.placeholder === text);
  if (!found) throw new Error(`fixture has no element '${text}'`);
  return found.index;
}

describe("llm grounding", () => {
  it("shows the accessibility tree, the numbered list and the btn hint, at temperature 0, and takes the index", async () => {
    const clear = indexOf("Clear list");
    server.enqueue(String(clear));
    const answer = await grounder().locate({ actionType: "Click", description: "the 'Clear list' button" }, context());
    expect(answer).toMatchObject({ index: clear, method: "text" });
    expect(answer.exchanges).toHaveLength(1);
    const [request] = server.chatRequests();
    expect(request?.body?.temperature).toBe(0);
    const prompt = messageParts(request!)
      .map((part) => (part.type === "text" ? String(part.text) : ""))
      .join("");
    expect(prompt).toContain("the 'Clear list' button");
    expect(prompt).toContain(`[${clear}] <button id="clear" class="btn"> "Clear list"`);
    expect(prompt).toContain('button "Clear list"'); // the aria snapshot
    expect(prompt).toContain("class `btn`");
    expect(messageParts(request!).some((part) => part.type === "image_url")).toBe(false);
  });

  it("falls back to a highlighted screenshot when the text model answers -1", async () => {
    const add = indexOf("Add");
    server.enqueue("-1", `${add}`);
    const before = screenshots;
    const answer = await grounder().locate({ actionType: "Click", description: "the blue button" }, context());
    expect(answer).toMatchObject({ index: add, method: "vision" });
    expect(screenshots).toBe(before + 1);
    const vision = server.chatRequests()[1]!;
    const images = messageParts(vision).filter((part) => part.type === "image_url");
    expect(images).toHaveLength(1);
    const url = String((images[0] as { image_url: { url: string } }).image_url.url);
    expect(url.startsWith("data:image/png;base64,")).toBe(true);
    const meta = await sharp(Buffer.from(url.slice("data:image/png;base64,".length), "base64")).metadata();
    expect([meta.width, meta.height]).toEqual([640, 480]);
    // The overlay is gone again: the page under test is left as it was.
    expect(await page.locator("#__iwr_highlight_overlay").count()).toBe(0);
  });

  it("treats an unparsable or out-of-list answer like -1, and reports -1 when the fallback fails too", async () => {
    server.enqueue("I am not sure which one.", "99");
    const answer = await grounder().locate({ actionType: "Click", description: "the checkout button" }, context());
    expect(answer.index).toBe(-1);
    expect(answer.exchanges.map((exchange) => exchange.reply)).toEqual(["I am not sure which one.", "99"]);
    expect(answer.reason).toMatch(/I am not sure/);
  });

  it('reads index,"text" for Type actions', async () => {
    const field = indexOf("New item");
    server.enqueue(`${field},"Oat milk"`);
    const answer = await grounder().locate({ actionType: "Type", description: "the new item field", text: "Oat milk" }, context());
    expect(answer).toMatchObject({ index: field, text: "Oat milk", method: "text" });
  });

  it("names the key of a Press action", async () => {
    server.enqueue("Escape");
    expect((await grounder().nameKey("close the dialog with the keyboard")).key).toBe("Escape");
    server.enqueue("NONE");
    expect((await grounder().nameKey("do something")).key).toBeUndefined();
  });
});

describe("parseGroundingReply", () => {
  it("reads the forms models answer in", () => {
    expect(parseGroundingReply("7", "Click")).toEqual({ index: 7 });
    expect(parseGroundingReply("[12]", "Click")).toEqual({ index: 12 });
    expect(parseGroundingReply("```\n-1\n```", "Click")).toEqual({ index: -1 });
    expect(parseGroundingReply('3,"say \\"hi\\""', "Type")).toEqual({ index: 3, text: 'say "hi"' });
    expect(parseGroundingReply("4, hello there", "Type")).toEqual({ index: 4, text: "hello there" });
    expect(parseGroundingReply("5", "Type")).toEqual({ index: 5 });
    expect(parseGroundingReply("no idea", "Click")).toBeUndefined();
  });
});
