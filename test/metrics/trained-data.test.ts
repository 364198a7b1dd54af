/**
 * The native engine's trained data is unpacked once per content: a reinstall that writes
 * the same packed file again (new modification time) finds the folder already there, and
 * another packed file gets a folder of its own.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { unpackedTrainedData } from "../../src/metrics/ocr-native.ts";

const work = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-trained-data-"));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function packed(name: string, content: string, mtime: Date): string {
  const file = path.join(work, name, "xyz.traineddata.gz");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, gzipSync(Buffer.from(content)));
  fs.utimesSync(file, mtime, mtime);
  return file;
}

describe("unpackedTrainedData", () => {
  it("names the folder by the packed content: the same bytes rewritten later share it, other bytes do not", () => {
    const unpackedDir = path.join(work, "unpacked");
    const first = unpackedTrainedData(packed("install-1", "model A", new Date("2026-01-01")), "xyz", unpackedDir);
    const reinstalled = unpackedTrainedData(packed("install-2", "model A", new Date("2026-06-01")), "xyz", unpackedDir);
    const other = unpackedTrainedData(packed("install-3", "model B", new Date("2026-01-01")), "xyz", unpackedDir);

    expect(reinstalled).toBe(first);
    expect(other).not.toBe(first);
    expect(fs.readFileSync(path.join(first, "xyz.traineddata"), "utf8")).toBe("model A");
    expect(fs.readFileSync(path.join(other, "xyz.traineddata"), "utf8")).toBe("model B");
    expect(fs.readdirSync(unpackedDir).sort()).toEqual([path.basename(first), path.basename(other)].sort());
  });
});
