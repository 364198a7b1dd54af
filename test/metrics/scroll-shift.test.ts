/**
 * A screen's change seen as a scroll (src/metrics/scroll-shift.ts), on real Chromium
 * screenshots of a page of our own: a scroll alone, a scroll with a change of content, a
 * change of content alone, and the offline judge's use of it (a screen that only scrolled
 * where the true page's content changed is not the truth's change).
 */
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { readScreenText } from "../../src/browser/screen-text.ts";
import { createHeuristicJudge } from "../../src/evaluator/judge/heuristic.ts";
import { scrollChange } from "../../src/metrics/scroll-shift.ts";

const ROWS = Array.from({ length: 40 }, (_, index) => `<li id="r${index}">Shelf ${index + 1}: ${["maps", "atlases", "guides", "charts"][index % 4]}</li>`).join(
  "",
);
const STYLE = "body{font:18px sans-serif;margin:20px;background:linear-gradient(#e8f4ff,#ffe8f0)}li{margin:10px 0}";
const PAGE = `<!doctype html><html><head><style>${STYLE}</style></head>
  <body><h2>Reading room</h2><ul id="list">${ROWS}</ul><button id="go">Show atlases only</button></body></html>`;
const showAtlasesOnly = (page: Page) =>
  page.evaluate(() => {
    for (const item of Array.from(document.querySelectorAll("li"))) if (!item.textContent?.includes("atlases")) item.remove();
  });

let browser: Awaited<ReturnType<typeof sharedBrowser>>;
beforeAll(async () => {
  browser = await sharedBrowser();
});
afterAll(async () => {
  await closeSharedBrowser();
});

async function around(act: (page: Page) => Promise<unknown>) {
  const context = await browser.newContext({ viewport: { width: 700, height: 400 }, deviceScaleFactor: 1 });
  try {
    const page = await context.newPage();
    await page.setContent(PAGE);
    const before = { png: await page.screenshot(), text: await readScreenText(page) };
    await act(page);
    await page.waitForTimeout(100);
    return { before, after: { png: await page.screenshot(), text: await readScreenText(page) } };
  } finally {
    await context.close();
  }
}

describe("a screen's change as a scroll", () => {
  it("a scroll alone: the shift, and nothing beyond it", async () => {
    const { before, after } = await around((page) => page.mouse.wheel(0, 150));
    const scrolled = await scrollChange(before.png, after.png);
    expect(scrolled?.shift).toBe(150);
    expect(scrolled?.residualPixels).toBeLessThan(40);
  });

  it("a scroll with a change of content is not a scroll alone", async () => {
    const { before, after } = await around(async (page) => {
      await page.mouse.wheel(0, 90);
      await page.evaluate(() => {
        document.getElementById("r8")!.textContent = "Shelf 9: closed for repairs until spring";
      });
    });
    // Either no shift explains it, or one does and leaves the new text's pixels: never "a scroll alone".
    const scrolled = await scrollChange(before.png, after.png);
    if (scrolled) expect(scrolled.residualPixels).toBeGreaterThan(300);
  });

  it("a change of content in place is not a scroll; nor is no change", async () => {
    const filtered = await around(showAtlasesOnly);
    expect(await scrollChange(filtered.before.png, filtered.after.png)).toBeUndefined();
    const still = await around(async () => {});
    expect(await scrollChange(still.before.png, still.after.png)).toBeUndefined();
  });

  it("the judge: a page that only scrolled is not the true page filtering its list", async () => {
    const judge = createHeuristicJudge();
    const truth = await around(showAtlasesOnly);
    const scrolledOnly = await around((page) => page.mouse.wheel(0, 200));
    const base = {
      actionIndex: 0,
      actionType: "Click",
      actionDescription: "the Show atlases only button",
      assertion: "Only the shelves of atlases are listed now",
    };
    const truthStates = { before: truth.before.png, after: truth.after.png };
    const wrong = await judge.judge({ ...base, before: scrolledOnly.before.png, after: scrolledOnly.after.png, truth: truthStates });
    expect(wrong.result, wrong.think).toBe("No");
    expect(wrong.think).toContain("only scrolled");
    const right = await judge.judge({ ...base, before: truth.before.png, after: truth.after.png, truth: truthStates });
    expect(right.result, right.think).toBe("Yes");
  });
});
