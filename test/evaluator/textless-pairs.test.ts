/**
 * A visual pair where neither picture shows any text: the harness's text similarity of two
 * empty readings is 1, so an empty page earns full OCR marks against a page of photos. The
 * official profile keeps that; corrected takes the pair's visual similarity as its OCR term.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pairEvalpoints } from "../../src/evaluator/pairing.ts";
import { createVisualScorers, scoreVisualPairs, shutdownVisualScorers, type VisualScorers } from "../../src/evaluator/visual-scorers.ts";
import { makeTempDir } from "../support/browser-fixtures.ts";
import { shoppingPage, solidPng } from "../support/evaluator-images.ts";

let dir: string;
let scorers: VisualScorers;
beforeAll(async () => {
  dir = makeTempDir("textless");
  scorers = await createVisualScorers({ dinoLocation: { found: false, reason: "test runs without the model" } });
});
afterAll(async () => {
  await shutdownVisualScorers();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A picture of coloured blocks, like a grid of photos: no text at all. */
async function photoGrid(): Promise<Buffer> {
  const tiles = Array.from({ length: 12 }, (_, i) => ({
    input: { create: { width: 280, height: 200, channels: 3 as const, background: { r: (i * 70) % 255, g: (i * 40) % 255, b: (i * 110) % 255 } } },
    left: 20 + (i % 4) * 310,
    top: 40 + Math.floor(i / 4) * 230,
  }));
  return sharp({ create: { width: 1280, height: 720, channels: 3, background: { r: 250, g: 250, b: 250 } } })
    .composite(tiles)
    .png()
    .toBuffer();
}

async function scoreAgainst(checkpoint: Buffer, screenshot: Buffer, textlessPairs?: "text-similarity" | "visual-similarity") {
  const files = { checkpoint: path.join(dir, `cp-${Math.random()}.png`), screenshot: path.join(dir, `ep-${Math.random()}.png`) };
  fs.writeFileSync(files.checkpoint, checkpoint);
  fs.writeFileSync(files.screenshot, screenshot);
  const pairing = pairEvalpoints({ flags: [], successStep: 0, evalpointPaths: [files.screenshot], checkpointPaths: [files.checkpoint], mode: "aligned" });
  const [step] = await scoreVisualPairs(pairing.pairs, scorers, textlessPairs ? { textlessPairs } : {});
  return step!;
}

describe("pairs without text", () => {
  it("official: an empty page against a page of photos gets the harness's full OCR term", async () => {
    const step = await scoreAgainst(await photoGrid(), await solidPng(1280, 720, [255, 255, 255]), "text-similarity");
    expect(step.ocr).toBe(1);
  });

  it("corrected: the OCR term is the pair's visual similarity, low for an empty page and high for the same picture", async () => {
    const grid = await photoGrid();
    const blank = await scoreAgainst(grid, await solidPng(1280, 720, [255, 255, 255]), "visual-similarity");
    expect(blank.ocr).toBe(blank.dino);
    expect(blank.ocr).toBeLessThan(0.75);
    const same = await scoreAgainst(grid, grid, "visual-similarity");
    expect(same.ocr).toBeCloseTo(1, 6);
  });

  it("corrected: a pair where either picture shows text keeps the text similarity", async () => {
    const step = await scoreAgainst(await shoppingPage(), await solidPng(1280, 720, [255, 255, 255]), "visual-similarity");
    expect(step.ocr).toBe(0);
    expect(step.dino).toBeGreaterThan(0);
  });
});
