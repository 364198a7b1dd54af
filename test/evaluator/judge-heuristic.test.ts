/**
 * The offline assertion judge on real screenshots (real Chromium) with real OCR:
 * a visible change plus the named literals → Yes; no change, or a literal not on
 * the screen → No.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { createHeuristicJudge, impliesChange, literalSimilarity } from "../../src/evaluator/judge/heuristic.ts";
import { shutdownOcr } from "../../src/evaluator/metrics/ocr.ts";
import { shoppingListPage } from "../support/evaluator-replay-fixtures.ts";

let page: Page;
let before: Buffer;
let after: Buffer;
const judge = createHeuristicJudge();

beforeAll(async () => {
  const browser = await sharedBrowser();
  page = await browser.newPage({ viewport: { width: 640, height: 480 } });
  await page.setContent(shoppingListPage());
  before = await page.screenshot();
  await page.fill("#item", "Blueberries");
  await page.click("#add");
  after = await page.screenshot();
});
afterAll(async () => {
  await page?.close();
  await closeSharedBrowser();
  await shutdownOcr();
});

function input(assertion: string, shots: { before: Buffer; after: Buffer }) {
  return { actionIndex: 0, actionType: "Click", actionDescription: "the 'Add' button", assertion, ...shots };
}

describe("heuristic assertion judge", () => {
  it("says Yes when the screen changed and the quoted text and number are on it", async () => {
    const verdict = await judge.judge(input("A new item 'Blueberries' appears and the counter shows 1 items", { before, after }));
    expect(verdict.result).toBe("Yes");
    expect(verdict.evidence?.changedPixels).toBeGreaterThan(100);
    expect(verdict.evidence?.literals.map((l) => [l.literal, l.found])).toEqual([["Blueberries", true], ["1", true]]);
    expect(verdict.evidence?.ocrText?.toLowerCase()).toContain("blueberries");
  });

  it("says No when a named string is not on the new screen", async () => {
    const verdict = await judge.judge(input("A new item 'Strawberries' appears", { before, after }));
    expect(verdict.result).toBe("No");
    expect(verdict.think).toMatch(/'Strawberries' is not on the new screen/);
  });

  it("says No when the assertion implies a change and nothing changed", async () => {
    const verdict = await judge.judge(input("The list shows a new item", { before, after: before }));
    expect(verdict.result).toBe("No");
    expect(verdict.evidence).toMatchObject({ impliesChange: true, changedPixels: 0 });
  });

  it("accepts an unchanged screen when the assertion says nothing should change", async () => {
    const verdict = await judge.judge(input("The list remains empty", { before, after: before }));
    expect(verdict.result).toBe("Yes");
  });
});

describe("heuristic judge helpers", () => {
  it("reads change words and tolerates OCR misreads of long literals only", () => {
    expect(impliesChange("The modal opens")).toBe(true);
    expect(impliesChange("The page stays the same")).toBe(false);
    expect(literalSimilarity("Add to cart", "buy now add to cart free")).toBe(1);
    expect(literalSimilarity("Blueberries", "blueherries 1 items")).toBeGreaterThan(0.8);
    expect(literalSimilarity("12", "total 13 items")).toBe(0);
  });
});
