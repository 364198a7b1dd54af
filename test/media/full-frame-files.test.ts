/**
 * The full-size samples of a video-state pass: a sample asked for before ffmpeg has written
 * it arrives once it has, in the buffer its reader lent; one ffmpeg never writes is an error.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FullFrameFiles } from "../../src/media/full-frame-files.ts";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-full-frames-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const FRAME = 6;
const segmentFile = (number: number) => path.join(dir, `full-${String(number).padStart(6, "0")}.raw`);

describe("full-size frame files", () => {
  it("hands a sample read before it was written over once it is, in the reader's own buffer", async () => {
    // Every second analysis frame is sampled: analysis frame 2 is sample 1.
    const files = new FullFrameFiles(dir, 2);
    files.setFrameBytes(FRAME);
    const lent = Buffer.alloc(FRAME);
    let arrived: Buffer | undefined;
    const reading = files.read(2, lent).then((frame) => (arrived = frame));
    fs.writeFileSync(segmentFile(0), Buffer.alloc(FRAME, 1));
    files.poll();
    await Promise.resolve();
    expect(arrived).toBeUndefined();
    fs.appendFileSync(segmentFile(0), Buffer.alloc(FRAME, 9));
    files.poll();
    await reading;
    expect(arrived).toEqual(Buffer.alloc(FRAME, 9));
    expect(arrived!.buffer).toBe(lent.buffer);
    files.remove();
  });

  it("a sample still awaited when ffmpeg ends is an error that says why ffmpeg stopped", async () => {
    const files = new FullFrameFiles(dir, 2);
    files.setFrameBytes(FRAME);
    fs.writeFileSync(segmentFile(0), Buffer.alloc(FRAME, 1));
    const reading = files.read(4, Buffer.alloc(FRAME));
    files.ended("exit code 1");
    await expect(reading).rejects.toThrow(/ffmpeg wrote no full-size frame 2 \(exit code 1\)/);
    files.remove();
  });
});
