/**
 * What OCR costs by purpose (src/metrics/ocr-cost.ts): each reading an engine makes is
 * tallied under the purpose its caller named, however many run at once on a pool whose
 * processes were started for other callers, with the native engine's CPU; tesseract.js's
 * readings are counted without CPU.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { forgetOcrCosts, ocrCosts, ocrCostTable, readingFor, UNNAMED_PURPOSE } from "../../src/metrics/ocr-cost.ts";
import { type OcrEngine, startNativeTesseract, startTesseractJs } from "../../src/metrics/ocr-engines.ts";
import { findTesseract } from "../../src/setup/find-tools.ts";
import { renderPage } from "../support/evaluator-images.ts";

const tesseract = findTesseract();
const engines: OcrEngine[] = [];
afterAll(async () => {
  await Promise.all(engines.map((engine) => engine.close()));
  forgetOcrCosts();
});
beforeEach(() => forgetOcrCosts());

const page = (text: string) => renderPage({ lines: [{ text, x: 60, y: 120, size: 40 }] });
const byPurpose = () => Object.fromEntries(ocrCosts().map((cost) => [cost.purpose, cost]));

describe.skipIf(!tesseract)("with native Tesseract", () => {
  it("tallies each reading under its caller's purpose, readings of several purposes at once on two processes, with their CPU", async () => {
    const engine = await startNativeTesseract(tesseract!, 2, "page");
    engines.push(engine);
    const images = await Promise.all(["Alpha checkout", "Bravo basket", "Charlie invoice", "Delta receipt", "Echo shipping"].map(page));
    // The processes start for the first two callers; later readings run on them for others.
    await Promise.all([
      readingFor("headings", () => engine.readSegments(images[0]!)),
      readingFor("footers", () => engine.readSegments(images[1]!)),
      readingFor("headings", () => engine.readSegments(images[2]!)),
      readingFor("headings", () => engine.readSegments(images[3]!)),
      engine.readSegments(images[4]!),
    ]);
    const costs = byPurpose();
    expect(Object.keys(costs).sort()).toEqual(["footers", "headings", UNNAMED_PURPOSE].sort());
    expect([costs.headings?.readings, costs.footers?.readings, costs[UNNAMED_PURPOSE]?.readings]).toEqual([3, 1, 1]);
    // Five readings of a screen's worth of pixels take Tesseract well over the /proc clock's 10 ms (its CPU is read on Linux only).
    if (process.platform === "linux") {
      const cpu = ocrCosts().reduce((sum, cost) => sum + (cost.cpuSec ?? Number.NaN), 0);
      expect(cpu).toBeGreaterThan(0.05);
    }
    expect(ocrCosts()[0]?.purpose).toBe("headings");
  });

  it("names a purpose that ends with the work it wraps: readings asked for afterwards are not its", async () => {
    const engine = await startNativeTesseract(tesseract!, 1, "page");
    engines.push(engine);
    await readingFor("first", () => engine.readSegments(Buffer.from([])).catch(() => undefined));
    await engine.readSegments(await page("Foxtrot refund"));
    // The failed reading is not counted; the later one is nobody's.
    expect(ocrCosts().map((cost) => [cost.purpose, cost.readings])).toEqual([[UNNAMED_PURPOSE, 1]]);
  });
});

describe("with tesseract.js", () => {
  it("counts its readings without CPU, and the table says the CPU was not measured", async () => {
    const engine = await startTesseractJs(1, "page");
    engines.push(engine);
    await readingFor("prices", () => engine.readSegments(Buffer.from([])).catch(() => undefined));
    await readingFor("prices", async () => engine.readSegments(await page("Golf voucher")));
    expect(ocrCosts()).toEqual([{ purpose: "prices", readings: 1, cpuSec: undefined }]);
    expect(ocrCostTable()).toContain("| prices | 1 | not measured |  |");
    forgetOcrCosts();
    expect(ocrCosts()).toEqual([]);
    expect(ocrCostTable()).toBe("OCR made no readings (every picture was already read)");
  }, 60_000);
});
