/**
 * DINO through the real loading and preprocessing path, with a tiny stand-in ONNX
 * model in the dinov2 folder layout; and the named fallback when the model is absent.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clippedCosine, loadDinoModel, locateDinoModel } from "../../src/metrics/dino.ts";
import { preprocessForDino, readDinoPreprocessing, resizedSize } from "../../src/metrics/dino-preprocess.ts";
import { createVisualMetric } from "../../src/metrics/visual.ts";
import { renderPage, shoppingPage, solidPng } from "../support/evaluator-images.ts";
import { DINOV2_PREPROCESSOR_CONFIG, tinyDinoExpectedCls, writeTinyDinoModel } from "../support/evaluator-tiny-dino.ts";

let modelDir: string;
const cleanup: string[] = [];

beforeAll(() => {
  modelDir = writeTinyDinoModel();
  cleanup.push(modelDir);
});
afterAll(() => {
  for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
});

describe("DINO preprocessing (dinov2-base's BitImageProcessor)", () => {
  it("resizes the shorter side to 256 with the longer side truncated, as transformers does", () => {
    expect(resizedSize(1280, 720, 256)).toEqual({ width: 455, height: 256 });
    expect(resizedSize(720, 1280, 256)).toEqual({ width: 256, height: 455 });
    expect(resizedSize(1000, 1000, 256)).toEqual({ width: 256, height: 256 });
  });

  it("rescales and normalises with ImageNet mean/std in CHW order", async () => {
    const prep = readDinoPreprocessing(modelDir);
    const pixels = await preprocessForDino(await solidPng(1280, 720, [255, 0, 0]), prep);
    const plane = 224 * 224;
    expect(pixels.length).toBe(3 * plane);
    expect(pixels[0]).toBeCloseTo((1 - 0.485) / 0.229, 4);
    expect(pixels[plane + 500]).toBeCloseTo((0 - 0.456) / 0.224, 4);
    expect(pixels[2 * plane + 999]).toBeCloseTo((0 - 0.406) / 0.225, 4);
  });

  it("center-crops 224 from the 455×256 resize (left offset 115)", async () => {
    // Black left half, white right half: the edge at x=640 lands at 227.5 after resize, 112.5 in the crop.
    const image = await renderPage({ background: "#ffffff", boxes: [{ x: 0, y: 0, width: 640, height: 720, color: "#000000" }] });
    const pixels = await preprocessForDino(image, readDinoPreprocessing(modelDir));
    const black = (0 - 0.485) / 0.229;
    const white = (1 - 0.485) / 0.229;
    expect(pixels[100 * 224 + 100]).toBeCloseTo(black, 3);
    expect(pixels[100 * 224 + 125]).toBeCloseTo(white, 3);
  });

  it("refuses a preprocessor config it does not implement", () => {
    const dir = writeTinyDinoModel({ ...DINOV2_PREPROCESSOR_CONFIG, resample: 2 });
    cleanup.push(dir);
    expect(() => readDinoPreprocessing(dir)).toThrow(/unsupported preprocessing resample=2/);
  });
});

describe("DINO model (tiny stand-in, same code path as dinov2-base)", () => {
  it("is found through IWR_DINO_MODEL_DIR and explains when it is not", () => {
    expect(locateDinoModel({ IWR_DINO_MODEL_DIR: modelDir })).toEqual({ found: true, modelDir: path.resolve(modelDir) });
    const missing = locateDinoModel({ IWR_DINO_MODEL_DIR: path.join(os.tmpdir(), "iwr-no-such-dino") });
    expect(missing.found).toBe(false);
    if (!missing.found) expect(missing.reason).toContain("IWR_DINO_MODEL_DIR");
  });

  it("embeds with the CLS token (position 0) of last_hidden_state", async () => {
    const model = await loadDinoModel(modelDir);
    const page = await shoppingPage();
    const embedding = await model.embed(page);
    const expected = tinyDinoExpectedCls(await preprocessForDino(page, model.preprocessing));
    expect(embedding.length).toBe(expected.length);
    for (const [i, value] of embedding.entries()) expect(value).toBeCloseTo(expected[i] ?? Number.NaN, 4);
    expect(await loadDinoModel(modelDir)).toBe(model);
  });

  it("scores identical images 1 and different ones lower, labelled as DINO", async () => {
    const metric = await createVisualMetric({ location: locateDinoModel({ IWR_DINO_MODEL_DIR: modelDir }) });
    expect(metric.info.name).toBe("dinov2-base-cls-cosine");
    expect(metric.info.dino.status).toBe("available");
    const page = await shoppingPage();
    expect(await metric.similarity(page, Buffer.from(page))).toBeCloseTo(1, 6);
    const other = await metric.similarity(page, await solidPng(1280, 720, [20, 120, 200]));
    expect(other).toBeGreaterThanOrEqual(0);
    expect(other).toBeLessThan(0.99);
  });

  it("clips the cosine to [0, 1]", () => {
    expect(clippedCosine(new Float32Array([1, 0]), new Float32Array([-1, 0]))).toBe(0);
    expect(clippedCosine(new Float32Array([1, 1]), new Float32Array([2, 2]))).toBeCloseTo(1, 6);
    expect(clippedCosine(new Float32Array([0, 0]), new Float32Array([1, 0]))).toBe(0);
  });
});

describe("fallback when DINO is absent", () => {
  it("uses ssim-gray-256, says so and why", async () => {
    const metric = await createVisualMetric({ location: { found: false, reason: "no model here" } });
    expect(metric.info).toEqual({ name: "ssim-gray-256", dino: { status: "unavailable", reason: "no model here" } });
    const page = await shoppingPage();
    expect(await metric.similarity(page, Buffer.from(page))).toBeCloseTo(1, 9);
    const changed = await metric.similarity(page, await shoppingPage("Completely different", "Nothing in common here"));
    expect(changed).toBeGreaterThan(0.5);
    expect(changed).toBeLessThan(1);
    expect(await metric.similarity(page, await solidPng(1280, 720, [0, 0, 0]))).toBeLessThan(changed);
  });
});
