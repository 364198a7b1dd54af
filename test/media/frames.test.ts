import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { planFrames, sampleFrames } from "../../src/media/frames.ts";
import { readMp4DurationSec } from "../../src/media/mp4-duration.ts";
import { makeTimecodedVideo, secondShownBy } from "../support/single-pass-videos.ts";

let dir: string;
let shortVideo: string;
let longVideo: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-frames-"));
  shortVideo = path.join(dir, "short.mp4");
  longVideo = path.join(dir, "long.mp4");
  await Promise.all([makeTimecodedVideo(shortVideo, { durationSec: 10, fps: 10 }), makeTimecodedVideo(longVideo, { durationSec: 100, fps: 2 })]);
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function sizeOf(png: Buffer): Promise<[number, number]> {
  const { width, height } = await sharp(png).metadata();
  return [width ?? 0, height ?? 0];
}

describe("sampleFrames", () => {
  it("takes one frame a second from a 10 s video, each showing its own second", async () => {
    const frames = await sampleFrames(shortVideo);
    expect(frames.map((frame) => frame.timeSec)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(frames.map((frame) => frame.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await Promise.all(frames.map((frame) => secondShownBy(frame.png)))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await sizeOf(frames[0]!.png)).toEqual([160, 90]);
  });

  it("takes exactly 64 evenly spaced frames from a 100 s video, each the picture on screen at its moment", async () => {
    const frames = await sampleFrames(longVideo);
    expect(frames).toHaveLength(64);
    const step = 100 / 64;
    for (const [i, frame] of frames.entries()) expect(frame.timeSec).toBeCloseTo(i * step, 9);
    // The video has a frame every 0.5 s: the one on screen at t started at floor(2t)/2.
    const expected = frames.map((frame) => Math.floor(Math.floor(frame.timeSec * 2) / 2));
    expect(await Promise.all(frames.map((frame) => secondShownBy(frame.png)))).toEqual(expected);
    expect(expected.at(-1)).toBe(98);
  });

  it("spreads a smaller frame cap over the whole video", async () => {
    const frames = await sampleFrames(longVideo, { maxFrames: 20 });
    expect(frames.map((frame) => frame.timeSec)).toEqual(Array.from({ length: 20 }, (_, i) => i * 5));
    expect(await Promise.all(frames.map((frame) => secondShownBy(frame.png)))).toEqual(Array.from({ length: 20 }, (_, i) => i * 5));
  });

  it("scales frames to maxSide in the same pass and never enlarges them", async () => {
    const small = await sampleFrames(shortVideo, { maxSide: 80 });
    expect(small).toHaveLength(10);
    for (const frame of small) expect(await sizeOf(frame.png)).toEqual([80, 45]);
    const untouched = await sampleFrames(shortVideo, { maxSide: 1000, maxFrames: 2 });
    expect(await sizeOf(untouched[0]!.png)).toEqual([160, 90]);
  });

  it("names the file when ffmpeg cannot read the video", async () => {
    const broken = path.join(dir, "broken.mp4");
    fs.writeFileSync(broken, "this is not a video");
    const failure = await sampleFrames(broken).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(IwrError);
    expect((failure as IwrError).code).toBe("MEDIA");
    expect((failure as IwrError).message).toContain(broken);
    // A known duration skips the probe: ffmpeg itself must then report the file.
    const direct = await sampleFrames(broken, { durationSec: 5 }).catch((error: unknown) => error);
    expect((direct as IwrError).code).toBe("MEDIA");
    expect((direct as IwrError).message).toContain(broken);
    const missing = await sampleFrames(path.join(dir, "missing.mp4")).catch((error: unknown) => error);
    expect((missing as IwrError).message).toMatch(/video not found: .*missing\.mp4/);
  });
});

describe("video duration", () => {
  it("is read from the MP4 movie header, and probed for other containers", async () => {
    expect(await readMp4DurationSec(shortVideo)).toBe(10);
    expect(await readMp4DurationSec(longVideo)).toBe(100);
    const webm = path.join(dir, "clip.webm");
    await promisify(execFile)("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=160x90:r=10:d=3", "-c:v", "libvpx", "-b:v", "200k", webm]);
    expect(await readMp4DurationSec(webm)).toBeUndefined();
    const frames = await sampleFrames(webm);
    expect(frames.map((frame) => frame.timeSec)).toEqual([0, 1, 2]);
  });
});

describe("planFrames", () => {
  it("gives ceil(duration) frames at 1 fps up to the cap, exactly the cap beyond it", () => {
    expect(planFrames(10).count).toBe(10);
    expect(planFrames(10.000_000_1).count).toBe(10);
    expect(planFrames(10.52).count).toBe(11);
    expect(planFrames(64).count).toBe(64);
    expect(planFrames(64.5).count).toBe(64);
    expect(planFrames(64.5).times.at(-1)).toBeCloseTo((63 * 64.5) / 64, 9);
    expect(planFrames(0.3).count).toBe(1);
  });

  it("rejects a duration that is not a positive number", () => {
    expect(() => planFrames(0)).toThrow(/positive number of seconds, got 0/);
    expect(() => planFrames(Number.NaN)).toThrow(IwrError);
  });
});
