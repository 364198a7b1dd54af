/**
 * The OCR engine choice (IWR_OCR_ENGINE, native Tesseract or tesseract.js) and the native
 * engine's long-lived processes: each image gets its own text however many are read at
 * once, and an image Tesseract cannot read fails alone, with Tesseract's message. The
 * tesseract.js pool, closed under readings still waiting or running, fails them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveOcrEngine } from "../../src/metrics/ocr-choice.ts";
import { type OcrEngine, startNativeTesseract, startTesseractJs } from "../../src/metrics/ocr-engines.ts";
import { joinOcrSegments } from "../../src/metrics/text-similarity.ts";
import { findTesseract } from "../../src/setup/find-tools.ts";
import { renderPage } from "../support/evaluator-images.ts";

const tesseract = findTesseract();
const engines: OcrEngine[] = [];
afterAll(async () => {
  await Promise.all(engines.map((engine) => engine.close()));
});

describe("the OCR engine choice", () => {
  it("runs what IWR_OCR_ENGINE names; auto takes native Tesseract only when it is there", () => {
    expect(resolveOcrEngine({ IWR_OCR_ENGINE: "tesseract.js", IWR_TESSERACT: tesseract ?? "/no/such/tesseract" })).toEqual({ name: "tesseract.js" });
    expect(resolveOcrEngine({ IWR_OCR_ENGINE: "auto", IWR_TESSERACT: "/no/such/tesseract" })).toEqual({ name: "tesseract.js" });
    if (tesseract) expect(resolveOcrEngine({ IWR_OCR_ENGINE: "auto", IWR_TESSERACT: tesseract })).toEqual({ name: "tesseract", executable: tesseract });
  });

  it("by default (IWR_OCR_ENGINE unset) runs native Tesseract when it is installed and runs, else tesseract.js", () => {
    expect(resolveOcrEngine({ IWR_TESSERACT: "/no/such/tesseract" })).toEqual({ name: "tesseract.js" });
    if (tesseract) expect(resolveOcrEngine({ IWR_TESSERACT: tesseract })).toEqual({ name: "tesseract", executable: tesseract });
  });

  it("takes a program that does not answer --version as Tesseract for none: passed over by default, refused when named", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-broken-tesseract-"));
    const failing = path.join(dir, "tesseract");
    fs.writeFileSync(failing, "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    try {
      // One that fails (a broken install), and one that runs but is another program.
      for (const program of [failing, process.execPath]) {
        expect(findTesseract({ IWR_TESSERACT: program })).toBeUndefined();
        expect(resolveOcrEngine({ IWR_TESSERACT: program })).toEqual({ name: "tesseract.js" });
        expect(() => resolveOcrEngine({ IWR_OCR_ENGINE: "tesseract", IWR_TESSERACT: program })).toThrow(/does not answer --version/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a native engine started with a program that is not Tesseract fails at once, saying so", async () => {
    await expect(startNativeTesseract(process.execPath, 1, "page")).rejects.toThrow(/did not answer as Tesseract does/);
  });

  it("refuses a native engine that is missing, and a name it does not know", () => {
    expect(() => resolveOcrEngine({ IWR_OCR_ENGINE: "tesseract", IWR_TESSERACT: "/no/such/tesseract" })).toThrow(/tesseract program was not found/);
    expect(() => resolveOcrEngine({ IWR_OCR_ENGINE: "easyocr" })).toThrow(/IWR_OCR_ENGINE: expected one of auto, tesseract, tesseract.js, got 'easyocr'/);
  });
});

describe.skipIf(!tesseract)("native Tesseract (long-lived processes)", () => {
  const page = (text: string) => renderPage({ lines: [{ text, x: 60, y: 120, size: 40 }] });

  it("gives each image its own text when several are read at once, and names its version", async () => {
    const engine = await startNativeTesseract(tesseract!, 2, "page");
    engines.push(engine);
    expect(engine.info.name).toBe("tesseract");
    expect(engine.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(engine.identity).toContain("4.0.0_best_int psm 3");
    const words = ["Alpha checkout", "Bravo basket", "Charlie invoice", "Delta receipt", "Echo shipping"];
    const texts = await Promise.all(words.map(async (word) => joinOcrSegments(await engine.readSegments(await page(word)))));
    expect(texts).toEqual(words);
  });

  it("fails only the reading of an image it cannot read, with Tesseract's message, and reads the next one", async () => {
    const engine = await startNativeTesseract(tesseract!, 1, "page");
    engines.push(engine);
    await expect(engine.readSegments(Buffer.from("not an image at all"))).rejects.toThrow(/native Tesseract could not read the image.*cannot be read/);
    expect(joinOcrSegments(await engine.readSegments(await page("Foxtrot refund")))).toBe("Foxtrot refund");
  });
});

describe("tesseract.js (worker threads)", () => {
  it("closed with readings in flight and waiting, fails them all and refuses later ones, leaving nothing unhandled", async () => {
    const engine = await startTesseractJs(1, "page");
    engines.push(engine);
    const png = await renderPage({ lines: [{ text: "Golf voucher", x: 60, y: 120, size: 40 }] });
    // One reading on the only worker, two waiting for it, as the evaluator's unawaited
    // checkpoint readings can be when a command ends and shuts OCR down.
    const readings = Promise.allSettled([1, 2, 3].map(() => engine.readSegments(png)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await engine.close();
    const outcomes = await readings;
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected", "rejected"]);
    for (const outcome of outcomes) expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/tesseract.js workers were shut down/);
    await expect(engine.readSegments(png)).rejects.toThrow(/tesseract.js workers were shut down/);
  }, 30_000);
});
