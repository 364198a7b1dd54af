/**
 * The on-disk store of reference (checkpoint) OCR texts: a later run finds a text by
 * the image's content hash instead of reading the image again; damaged or foreign
 * entries are never trusted; candidates' screenshots are never stored.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { readImageText, setReferenceTextDir, shutdownOcr } from "../../src/metrics/ocr.ts";
import { defaultReferenceTextDir } from "../../src/metrics/reference-text-store.ts";
import { shoppingPage } from "../support/evaluator-images.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-ocr-text-"));
let storeDir = root;

/** Every entry file under the store, as [path, parsed JSON or the raw text when it does not parse]. */
function entries(): Array<[string, unknown]> {
  if (!fs.existsSync(storeDir)) return [];
  return fs
    .readdirSync(storeDir, { recursive: true, encoding: "utf8" })
    .map((name) => path.join(storeDir, name))
    .filter((file) => file.endsWith(".json"))
    .map((file) => {
      const raw = fs.readFileSync(file, "utf8");
      try {
        return [file, JSON.parse(raw) as unknown];
      } catch {
        return [file, raw];
      }
    });
}

beforeEach(async () => {
  // A fresh store and an empty in-memory cache for each case.
  await shutdownOcr();
  storeDir = fs.mkdtempSync(path.join(root, "store-"));
  setReferenceTextDir(storeDir);
});

afterAll(async () => {
  await shutdownOcr();
  setReferenceTextDir(defaultReferenceTextDir());
  fs.rmSync(root, { recursive: true, force: true });
});

describe("reference OCR texts kept on disk", () => {
  it("stores a checkpoint's text and serves the next run from disk, not from OCR", async () => {
    const png = await shoppingPage();
    const text = await readImageText(png, { reference: true });
    expect(text.toLowerCase()).toContain("shopping list");
    const stored = entries();
    expect(stored).toHaveLength(1);
    const [file, entry] = stored[0]!;
    expect(entry).toMatchObject({ version: 1, text });
    expect((entry as { engine: string }).engine).toMatch(/^tesseract\.js@\d+\.\d+\.\d+ core@\S+ data@\S+ oem lstm eng \S+ psm \d+ dpi \d+ text-format \d+$/);

    // A later run (empty memory cache) must take the text from the store: mark the entry and see the mark come back.
    await shutdownOcr();
    fs.writeFileSync(file, JSON.stringify({ ...(entry as object), text: "text from the store" }));
    expect(await readImageText(png, { reference: true })).toBe("text from the store");
  });

  it("moves a damaged entry or one naming another image aside, reads the image again and repairs the entry", async () => {
    const png = await shoppingPage();
    const text = await readImageText(png, { reference: true });
    const [file, entry] = entries()[0]!;

    for (const damage of [
      "{ not json",
      JSON.stringify({ ...(entry as object), sha256: "0".repeat(64), text: "another image" }),
      JSON.stringify({ version: 2, text: "x" }),
    ]) {
      await shutdownOcr();
      fs.writeFileSync(file, damage);
      expect(await readImageText(png, { reference: true })).toBe(text);
      expect(JSON.parse(fs.readFileSync(file, "utf8"))).toMatchObject({ version: 1, text });
    }
    // Each damaged entry was moved aside, kept for whoever looks into it.
    expect([`${file}.corrupt`, `${file}.corrupt-2`, `${file}.corrupt-3`].map((aside) => fs.existsSync(aside))).toEqual([true, true, true]);
  });

  it("keeps nothing for candidates' screenshots, and nothing at all when switched off", async () => {
    const png = await shoppingPage("Candidate page", "Buy eggs");
    expect((await readImageText(png)).toLowerCase()).toContain("candidate page");
    expect(entries()).toHaveLength(0);

    setReferenceTextDir(undefined);
    expect((await readImageText(await shoppingPage("Reference page", "Buy milk"), { reference: true })).toLowerCase()).toContain("reference page");
    expect(entries()).toHaveLength(0);
  });

  it("takes its folder from IWR_OCR_CACHE_DIR ('off' disables it), else .cache/ocr-text", () => {
    expect(defaultReferenceTextDir({ IWR_OCR_CACHE_DIR: "/data/ocr" })).toBe(path.resolve("/data/ocr"));
    expect(defaultReferenceTextDir({ IWR_OCR_CACHE_DIR: "off" })).toBeUndefined();
    expect(defaultReferenceTextDir({})).toBe(path.resolve(".cache", "ocr-text"));
  });
});
