/**
 * One read per image content: OCR texts, visual features and any reader's readings are
 * computed once per process, kept on disk for later runs (found by the decoded pixels,
 * whatever the file's encoding), never trusted when damaged or written by another reader
 * setup, and bounded in size.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.ts";
import {
  forgetReadings,
  type ImageReader,
  imageContentKey,
  readDerivedOnce,
  readingCounts,
  readOnce,
  setReadingStoreDir,
} from "../../src/metrics/image-readings.ts";
import { readImageText, shutdownOcr } from "../../src/metrics/ocr.ts";
import { clearReadingStore, defaultReadingStoreDir, openReadingStore, readingStoreLimitBytes, readingStoreStats } from "../../src/metrics/reading-store.ts";
import { createVisualMetric } from "../../src/metrics/visual.ts";
import { renderPage, shoppingPage } from "../support/evaluator-images.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-image-readings-"));
let storeDir = root;

/** Every reading file under the store. */
function entryFiles(): string[] {
  if (!fs.existsSync(storeDir)) return [];
  return fs
    .readdirSync(storeDir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".bin"))
    .map((name) => path.join(storeDir, name));
}

/** A reader that counts its work and reads the image's mean brightness, as text. */
function countingReader(identity: string): ImageReader<string> & { calls: number } {
  const reader = {
    kind: "test-brightness",
    identity,
    calls: 0,
    async read(image: Buffer) {
      reader.calls += 1;
      const { channels } = await sharp(image).stats();
      return `mean ${channels[0]?.mean.toFixed(1)}`;
    },
    encode: (text: string) => Buffer.from(text),
    decode: (stored: Buffer) => stored.toString(),
    size: (text: string) => text.length,
  };
  return reader;
}

/** A new process's view: nothing in memory, the same disk. */
async function nextRun(): Promise<void> {
  await shutdownOcr();
  forgetReadings();
}

beforeEach(async () => {
  await nextRun();
  storeDir = fs.mkdtempSync(path.join(root, "store-"));
  setReadingStoreDir(storeDir);
});

afterAll(async () => {
  await nextRun();
  setReadingStoreDir(defaultReadingStoreDir());
  fs.rmSync(root, { recursive: true, force: true });
});

describe("image readings", () => {
  it("reads a screenshot's text once, and a later run takes it from disk, not from OCR", async () => {
    const png = await shoppingPage("Candidate page", "Buy eggs");
    const text = await readImageText(png);
    expect(text.toLowerCase()).toContain("candidate page");
    expect(await readImageText(Buffer.from(png))).toBe(text);
    expect(readingCounts()["ocr-text"]).toEqual({ asked: 2, memory: 1, disk: 0, read: 1 });
    const [file] = entryFiles();
    expect(entryFiles()).toHaveLength(1);

    // A later run must take the text from the store: mark the entry and see the mark come back.
    await nextRun();
    const raw = fs.readFileSync(file!);
    const header = raw.subarray(0, raw.indexOf(10) + 1);
    expect(JSON.parse(header.toString())).toMatchObject({ format: 1, reader: expect.stringMatching(/^ocr-text tesseract(\.js)?@\d+\.\d+\.\d+ /) });
    fs.writeFileSync(file!, Buffer.concat([header, Buffer.from("text from the store")]));
    expect(await readImageText(png)).toBe("text from the store");
    expect(readingCounts()["ocr-text"]).toEqual({ asked: 1, memory: 0, disk: 1, read: 0 });
  });

  it("knows a picture by its pixels: the same screen encoded otherwise is not read again", async () => {
    const png = await renderPage({ lines: [{ text: "Same pixels", x: 40, y: 80 }] });
    const recoded = await sharp(png).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer();
    expect(recoded.equals(png)).toBe(false);
    expect(await imageContentKey(recoded)).toBe(await imageContentKey(png));
    const other = await renderPage({ lines: [{ text: "Other pixels", x: 40, y: 80 }] });
    expect(await imageContentKey(other)).not.toBe(await imageContentKey(png));

    const reader = countingReader("v1");
    const [first, second] = await Promise.all([readOnce(reader, png), readOnce(reader, recoded)]);
    expect(second).toBe(first);
    await readOnce(reader, other);
    expect(reader.calls).toBe(2);
  });

  it("makes and reads an image derived from a screen once per screen content and recipe, in this run and the next", async () => {
    const screen = await renderPage({ lines: [{ text: "Left half", x: 40, y: 80 }] });
    const recoded = await sharp(screen).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer();
    const reader = countingReader("v1");
    let made = 0;
    const crop = (left: number) => async () => {
      made += 1;
      return sharp(screen).extract({ left, top: 0, width: 100, height: 100 }).png().toBuffer();
    };
    expect(recoded.equals(screen)).toBe(false);
    // Three requests at once, one with the same screen in other bytes: one image made, one read.
    const [first, ...again] = await Promise.all([
      readDerivedOnce(reader, screen, "left 0", crop(0)),
      readDerivedOnce(reader, recoded, "left 0", crop(0)),
      readDerivedOnce(reader, screen, "left 0", crop(0)),
    ]);
    expect(again).toEqual([first, first]);
    expect({ made, reads: reader.calls }).toEqual({ made: 1, reads: 1 });
    expect(readingCounts()["test-brightness"]).toEqual({ asked: 3, memory: 2, disk: 0, read: 1 });

    // Another recipe is made, and when its image has the same pixels, the two share one reading.
    const sameCut = await readDerivedOnce(reader, screen, "left 0, again", crop(0));
    expect(sameCut).toBe(first);
    expect({ made, reads: reader.calls }).toEqual({ made: 2, reads: 1 });
    expect(readingCounts()["test-brightness"]).toEqual({ asked: 4, memory: 3, disk: 0, read: 1 });

    // A cut that cannot be made fails its request, is counted as asked, and is not kept.
    const failing = async () => Promise.reject(new Error("no such region"));
    await expect(readDerivedOnce(reader, screen, "left 9999", failing)).rejects.toThrow("no such region");
    expect(readingCounts()["test-brightness"]?.asked).toBe(5);
    expect(await readDerivedOnce(reader, screen, "left 9999", crop(0))).toBe(first);
    expect({ made, reads: reader.calls }).toEqual({ made: 3, reads: 1 });

    // A later run finds the derived reading on disk without making the image.
    await nextRun();
    expect(await readDerivedOnce(reader, screen, "left 0", crop(0))).toBe(first);
    expect({ made, reads: reader.calls }).toEqual({ made: 3, reads: 1 });
    expect(readingCounts()["test-brightness"]).toEqual({ asked: 1, memory: 0, disk: 1, read: 0 });

    // Another screen under the same recipe is another image.
    const other = await renderPage({ lines: [{ text: "Other", x: 0, y: 20 }] });
    await readDerivedOnce(reader, other, "left 0", async () => sharp(other).extract({ left: 0, top: 0, width: 100, height: 100 }).png().toBuffer());
    expect(reader.calls).toBe(2);
  });

  it("never gives one reader setup's reading to another, and keeps no failed reading", async () => {
    const png = await renderPage({ background: "#808080" });
    const v1 = countingReader("v1");
    const v2 = countingReader("v2");
    await readOnce(v1, png);
    await readOnce(v2, png);
    expect([v1.calls, v2.calls]).toEqual([1, 1]);

    let failures = 1;
    const flaky: ImageReader<string> = {
      ...countingReader("flaky"),
      read: async () => {
        if (failures-- > 0) throw new Error("engine hiccup");
        return "read";
      },
    };
    await expect(readOnce(flaky, png)).rejects.toThrow("engine hiccup");
    expect(await readOnce(flaky, png)).toBe("read");
  });

  it("moves a damaged entry or one naming another image aside, reads the image again and repairs the entry", async () => {
    const png = await renderPage({ background: "#336699" });
    const reader = countingReader("v1");
    const reading = await readOnce(reader, png);
    const [file] = entryFiles();
    const good = fs.readFileSync(file!);
    const header = good.subarray(0, good.indexOf(10)).toString();
    for (const damage of [
      "{ not json\nmean 0",
      `${header.replace(/"image":"[0-9a-f]+"/, `"image":"${"0".repeat(64)}"`)}\nanother image`,
      `${header.replace('"format":1', '"format":2')}\nmean 0`,
      "",
    ]) {
      forgetReadings();
      fs.writeFileSync(file!, damage);
      expect(await readOnce(reader, png)).toBe(reading);
      expect(fs.readFileSync(file!).equals(good)).toBe(true);
    }
    expect(reader.calls).toBe(5);
    // A damaged entry is moved aside, kept for whoever looks into it (an empty file is kept too).
    expect([".corrupt", ".corrupt-2", ".corrupt-3", ".corrupt-4"].map((suffix) => fs.existsSync(`${file}${suffix}`))).toEqual([true, true, true, true]);
  });

  it("keeps each image's visual features once: similarity and features share them", async () => {
    const metric = await createVisualMetric({ location: { found: false, reason: "test: the SSIM fallback" } });
    const a = await renderPage({ lines: [{ text: "Checkpoint", x: 40, y: 80 }] });
    const b = await renderPage({ lines: [{ text: "Candidate", x: 40, y: 80 }] });
    const similarity = await metric.similarity(a, b);
    expect(metric.compare(await metric.features(a), await metric.features(b))).toBe(similarity);
    expect(readingCounts()["visual-features"]).toEqual({ asked: 4, memory: 2, disk: 0, read: 2 });
    await nextRun();
    expect(await metric.similarity(b, a)).toBe(similarity);
    expect(readingCounts()["visual-features"]).toMatchObject({ disk: 2, read: 0 });
  });

  it("keeps nothing on disk when switched off", async () => {
    setReadingStoreDir(undefined);
    await readOnce(countingReader("v1"), await renderPage({ background: "#112233" }));
    expect(entryFiles()).toHaveLength(0);
  });

  it("stays within its size: the least recently used readings go first", async () => {
    const store = openReadingStore(storeDir, { maxBytes: 4000 });
    const reader = { kind: "test-bytes", identity: "v1" };
    const value = Buffer.alloc(900, 7);
    await store.put(reader, "a".repeat(64), value);
    // "a" is older than everything written after it.
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(entryFiles()[0]!, old, old);
    for (const key of ["b", "c", "d", "e"]) await store.put(reader, key.repeat(64), value);
    const stats = await readingStoreStats(storeDir);
    expect(stats.bytes).toBeLessThanOrEqual(4000);
    expect(await store.get(reader, "a".repeat(64))).toBeUndefined();
    expect(await store.get(reader, "e".repeat(64))).toEqual(value);
  });

  it("reports what it holds reader by reader, and clears only its own folders", async () => {
    await readOnce(countingReader("v1"), await renderPage({ background: "#445566" }));
    await readOnce(countingReader("v2"), await renderPage({ background: "#445566" }));
    fs.writeFileSync(path.join(storeDir, "notes.txt"), "not a reading");
    const stats = await readingStoreStats(storeDir);
    expect(stats.entries).toBe(2);
    expect(stats.readers.map((reader) => `${reader.kind} ${reader.identity} ${reader.entries}`).sort()).toEqual([
      "test-brightness v1 1",
      "test-brightness v2 1",
    ]);
    expect(await clearReadingStore(storeDir)).toMatchObject({ removedEntries: 2 });
    expect(entryFiles()).toHaveLength(0);
    expect(fs.readFileSync(path.join(storeDir, "notes.txt"), "utf8")).toBe("not a reading");
  });

  it("`iwr cache stats` lists the readings; `iwr cache clear --readings` removes them and leaves the responses", async () => {
    await readOnce(countingReader("v1"), await renderPage({ background: "#778899" }));
    const responses = fs.mkdtempSync(path.join(root, "responses-"));
    fs.mkdirSync(path.join(responses, "gpt-4o"));
    fs.writeFileSync(path.join(responses, "gpt-4o", `${"a".repeat(64)}.json`), "{}");
    const printed: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)));
    try {
      expect(await main(["node", "iwr", "cache", "stats", "--dir", responses, "--readings-dir", storeDir, "--json"])).toBe(0);
      const stats = JSON.parse(printed.join("\n"));
      expect(stats.entries).toBe(1);
      expect(stats.readings).toMatchObject({ entries: 1, readers: [{ kind: "test-brightness", identity: "v1", entries: 1 }] });
      printed.length = 0;
      expect(await main(["node", "iwr", "cache", "clear", "--readings", "--readings-dir", storeDir])).toBe(0);
      expect(printed.join("\n")).toContain(`removed 1 image readings`);
      expect(entryFiles()).toHaveLength(0);
      expect(fs.existsSync(path.join(responses, "gpt-4o", `${"a".repeat(64)}.json`))).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it("takes its size limit from IWR_READINGS_CACHE_MAX_MB, and refuses a limit that is not a positive number", () => {
    expect(readingStoreLimitBytes({ IWR_READINGS_CACHE_MAX_MB: "1.5" })).toBe(1.5 * 1024 * 1024);
    expect(readingStoreLimitBytes({})).toBe(2 * 1024 * 1024 * 1024);
    expect(() => readingStoreLimitBytes({ IWR_READINGS_CACHE_MAX_MB: "lots" })).toThrow(/IWR_READINGS_CACHE_MAX_MB: expected a positive number/);
  });

  it("takes its folder from IWR_READINGS_CACHE_DIR (or the older IWR_OCR_CACHE_DIR; 'off' disables it), else .cache/image-readings", () => {
    expect(defaultReadingStoreDir({ IWR_READINGS_CACHE_DIR: "/data/readings" })).toBe(path.resolve("/data/readings"));
    expect(defaultReadingStoreDir({ IWR_OCR_CACHE_DIR: "/data/ocr" })).toBe(path.resolve("/data/ocr"));
    expect(defaultReadingStoreDir({ IWR_READINGS_CACHE_DIR: "off" })).toBeUndefined();
    expect(defaultReadingStoreDir({})).toBe(path.resolve(".cache", "image-readings"));
  });
});
