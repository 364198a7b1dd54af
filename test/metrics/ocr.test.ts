/**
 * OCR similarity: the formula's edge cases, and the real engine (Tesseract) reading
 * rendered screenshots.
 */
import { afterAll, describe, expect, it } from "vitest";
import { compareOcr, ocrEngineInfo, readImageText, shutdownOcr } from "../../src/metrics/ocr.ts";
import { resolveOcrEngine } from "../../src/metrics/ocr-choice.ts";
import { joinOcrSegments, textSimilarity } from "../../src/metrics/text-similarity.ts";
import { shoppingPage, solidPng } from "../support/evaluator-images.ts";

afterAll(async () => {
  await shutdownOcr();
});

describe("textSimilarity (§3.5)", () => {
  it("is 1 − Levenshtein / longer length, case-insensitive", () => {
    expect(textSimilarity("kitten", "sitting")).toBeCloseTo(1 - 3 / 7, 12);
    expect(textSimilarity("Add To Cart", "add to cart")).toBe(1);
    expect(textSimilarity("abc", "xyz")).toBe(0);
  });

  it("both empty → 1, exactly one empty → 0", () => {
    expect(textSimilarity("", "")).toBe(1);
    expect(textSimilarity("", "text")).toBe(0);
    expect(textSimilarity("text", "")).toBe(0);
  });

  it("segments are trimmed and joined by single spaces, empty ones dropped", () => {
    expect(joinOcrSegments(["  Shopping List ", "", "Buy milk", "   "])).toBe("Shopping List Buy milk");
    expect(joinOcrSegments([])).toBe("");
  });
});

describe("OCR engine (native Tesseract when installed, else tesseract.js; offline)", () => {
  it("reads dark-on-light and light-on-dark text of a rendered 720p page", async () => {
    const text = (await readImageText(await shoppingPage())).toLowerCase();
    expect(text).toContain("shopping list");
    expect(text).toContain("buy milk and bread tomorrow");
    expect(text).toContain("footer text on dark");
  });

  it("identical images → 1; different text → between 0 and 1; blank vs text → 0; blank vs blank → 1", async () => {
    const page = await shoppingPage();
    const same = await compareOcr(page, Buffer.from(page));
    expect(same.similarity).toBe(1);
    expect(same.checkpointText).toBe(same.screenshotText);

    const other = await compareOcr(page, await shoppingPage("Shopping List", "Sell eggs and cheese today"));
    expect(other.similarity).toBeGreaterThan(0.3);
    expect(other.similarity).toBeLessThan(0.95);

    const blank = await solidPng(1280, 720, [255, 255, 255]);
    const oneEmpty = await compareOcr(page, blank);
    expect(oneEmpty.screenshotText).toBe("");
    expect(oneEmpty.similarity).toBe(0);
    expect((await compareOcr(blank, await solidPng(1280, 720, [250, 250, 250]))).similarity).toBe(1);
  });

  it("names the engine it runs, and its version", async () => {
    const info = await ocrEngineInfo();
    expect(info.name).toBe(resolveOcrEngine().name);
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.detail).toContain("psm 3");
  });
});
