/**
 * Reading frames out of segment files while their writer is still appending: what a
 * frame is before and after its bytes are all there, where one segment ends and the next
 * begins, which segments go when their frames are released, and files that do not hold
 * whole frames. Real ffmpeg writes the first case's segments, as in a video-state pass.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FrameSegments } from "../../src/media/frame-segments.ts";
import { findFfmpeg } from "../../src/setup/find-tools.ts";

const run = promisify(execFile);
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-segments-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const FRAME = 4;
const segmentFile = (number: number) => path.join(dir, `grey-${String(number).padStart(6, "0")}.raw`);
/** Frame n's bytes, all equal to n: what was read can be told apart. */
const frameOf = (n: number) => Buffer.alloc(FRAME, n);

describe("frame segments", () => {
  it("reads every frame ffmpeg's segment muxer wrote, in order, across its files", async () => {
    // 3 s of 8x2 grey frames at 5 fps whose shade rises frame by frame, cut every second,
    // in a folder whose name ffmpeg would read as a pattern if it were not escaped.
    const folder = path.join(dir, "100%d %s");
    fs.mkdirSync(folder);
    const segments = new FrameSegments(folder, "grey");
    await run(findFfmpeg()!.path, [
      "-v",
      "error",
      "-f",
      "lavfi",
      "-i",
      "nullsrc=s=8x2:r=5:d=3",
      "-vf",
      "format=gray,geq=lum='N*10'",
      "-c:v",
      "rawvideo",
      "-f",
      "segment",
      "-segment_format",
      "rawvideo",
      "-segment_time",
      "1",
      segments.pattern,
    ]);
    expect(fs.readdirSync(folder).length).toBeGreaterThan(1);
    segments.setFrameBytes(16);
    segments.end();
    const shades: number[] = [];
    for (let index = 0; ; index++) {
      const frame = segments.read(index);
      if (!frame) break;
      expect(new Set(frame).size).toBe(1);
      shades.push(frame[0]!);
      segments.release(index);
    }
    expect(shades).toEqual(Array.from({ length: 15 }, (_, n) => n * 10));
    // Every frame released: every segment is gone.
    expect(fs.readdirSync(folder)).toEqual([]);
  });

  it("frames released without being read free their segments as soon as the next one begins", () => {
    // As the full-size samples of a long state go: thinned away, never read.
    const segments = new FrameSegments(dir, "grey");
    segments.setFrameBytes(FRAME);
    fs.writeFileSync(segmentFile(0), Buffer.concat([frameOf(0), frameOf(1)]));
    segments.release(0);
    segments.release(1);
    expect(fs.existsSync(segmentFile(0))).toBe(true);
    fs.writeFileSync(segmentFile(1), frameOf(2));
    segments.release(2);
    expect(fs.existsSync(segmentFile(0))).toBe(false);
    // A frame of a segment completed earlier, released late, frees it too.
    fs.appendFileSync(segmentFile(1), frameOf(3));
    fs.writeFileSync(segmentFile(2), frameOf(4));
    segments.release(4);
    expect(fs.existsSync(segmentFile(1))).toBe(true);
    segments.release(3);
    expect(fs.existsSync(segmentFile(1))).toBe(false);
    // The last segment is complete only once ffmpeg has ended; the next release finds it so.
    segments.end();
    segments.release(4);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("a frame is there only once all its bytes are; the segment being written may still grow", () => {
    const segments = new FrameSegments(dir, "grey");
    segments.setFrameBytes(FRAME);
    expect(segments.read(0)).toBeUndefined();
    fs.writeFileSync(segmentFile(0), Buffer.concat([frameOf(0), frameOf(1).subarray(0, 2)]));
    expect(segments.read(0)).toEqual(frameOf(0));
    expect(segments.read(1)).toBeUndefined();
    fs.appendFileSync(segmentFile(0), frameOf(1).subarray(2));
    expect(segments.read(1)).toEqual(frameOf(1));
    // The next segment begun: the first is complete with its two frames, and frame 2 is the next one's first.
    fs.writeFileSync(segmentFile(1), frameOf(2));
    expect(segments.read(2)).toEqual(frameOf(2));
    expect(segments.read(3)).toBeUndefined();
    expect(segments.read(1)).toEqual(frameOf(1));
  });

  it("deletes a segment once it is complete and all its frames are released, released ahead or not", () => {
    const segments = new FrameSegments(dir, "full");
    const file = (number: number) => path.join(dir, `full-${String(number).padStart(6, "0")}.raw`);
    segments.setFrameBytes(FRAME);
    // Frame 1 released before it is written.
    segments.release(1);
    fs.writeFileSync(file(0), Buffer.concat([frameOf(0), frameOf(1)]));
    segments.release(0);
    // Still the segment being written: it may hold more frames.
    expect(fs.existsSync(file(0))).toBe(true);
    fs.writeFileSync(file(1), Buffer.concat([frameOf(2), frameOf(3)]));
    expect(segments.read(2)).toEqual(frameOf(2));
    expect(fs.existsSync(file(0))).toBe(false);
    expect(segments.read(0)).toBeUndefined();
    // A kept frame keeps its segment, even once ffmpeg has ended.
    segments.release(3);
    segments.end();
    expect(segments.read(3)).toEqual(frameOf(3));
    expect(fs.existsSync(file(1))).toBe(true);
    segments.release(2);
    expect(segments.read(4)).toBeUndefined();
    expect(fs.existsSync(file(1))).toBe(false);
    segments.remove();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("a complete segment that does not hold whole frames is an error naming it", () => {
    const segments = new FrameSegments(dir, "grey");
    segments.setFrameBytes(FRAME);
    fs.writeFileSync(segmentFile(0), Buffer.alloc(FRAME + 1));
    expect(segments.read(0)).toEqual(Buffer.alloc(FRAME));
    segments.end();
    expect(() => segments.read(1)).toThrow(/grey-000000\.raw holds 5 bytes, not a whole number of 4-byte frames/);
  });

  it("reads into the caller's buffer when given one, and refuses one too small for a frame", () => {
    const segments = new FrameSegments(dir, "grey");
    segments.setFrameBytes(FRAME);
    fs.writeFileSync(segmentFile(0), Buffer.concat([frameOf(7), frameOf(8)]));
    const reused = Buffer.alloc(FRAME + 2, 0xff);
    const first = segments.read(0, reused);
    expect(first).toEqual(frameOf(7));
    expect(first!.buffer).toBe(reused.buffer);
    expect(segments.read(1, reused)).toEqual(frameOf(8));
    expect(reused.subarray(0, FRAME)).toEqual(frameOf(8));
    // Bytes past the frame are the caller's: untouched.
    expect(reused.subarray(FRAME)).toEqual(Buffer.alloc(2, 0xff));
    expect(() => segments.read(0, Buffer.alloc(FRAME - 1))).toThrow(/a 3-byte buffer cannot hold a 4-byte frame/);
  });

  it("knows nothing before the frame size is known, but can tell that ffmpeg has begun writing", () => {
    const segments = new FrameSegments(dir, "grey");
    fs.writeFileSync(segmentFile(0), frameOf(0));
    expect(segments.begun(0)).toBe(true);
    expect(segments.begun(1)).toBe(false);
    expect(segments.read(0)).toBeUndefined();
    segments.setFrameBytes(FRAME);
    expect(segments.read(0)).toEqual(frameOf(0));
  });
});
