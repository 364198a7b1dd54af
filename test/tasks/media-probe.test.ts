import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { probeImage, probeVideo } from "../../src/media/probe.ts";
import { findFfmpeg } from "../../src/setup/find-tools.ts";
import { makeTestPng, makeTestVideo } from "../support/tasks-fixtures.ts";

const run = promisify(execFile);
let dir: string;
let mp4: string;
let webm: string;

/** The ffmpeg shipped through npm has no ffprobe beside it: the real case for the fallback. */
function fallbackFfmpeg(): string {
  try {
    return (createRequire(import.meta.url)("@ffmpeg-installer/ffmpeg") as { path: string }).path;
  } catch {
    return findFfmpeg()!.path;
  }
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "iwr-probe-"));
  mp4 = path.join(dir, "clip.mp4");
  webm = path.join(dir, "clip.webm");
  await makeTestVideo(mp4, { width: 320, height: 180, seconds: 2 });
  await run(findFfmpeg()!.path, ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=10", "-t", "1", "-c:v", "libvpx-vp9", webm]);
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe("probeVideo", () => {
  it("reads an H.264 mp4 with ffprobe", async () => {
    expect(await probeVideo(mp4)).toEqual({ durationSec: 2, width: 320, height: 180, fps: 5, frameCount: 10, codec: "h264", pixFmt: "yuv420p" });
  });

  it("falls back to the header of `ffmpeg -i` when there is no ffprobe", async () => {
    expect(await probeVideo(mp4, { ffprobePath: null, ffmpegPath: fallbackFfmpeg() })).toEqual({
      durationSec: 2,
      width: 320,
      height: 180,
      fps: 5,
      codec: "h264",
      pixFmt: "yuv420p",
    });
  });

  it("reads a VP9 webm both ways", async () => {
    const expected = { durationSec: 1, width: 160, height: 90, fps: 10, codec: "vp9" };
    expect(await probeVideo(webm)).toMatchObject(expected);
    expect(await probeVideo(webm, { ffprobePath: null, ffmpegPath: fallbackFfmpeg() })).toMatchObject(expected);
  });

  it("names the file and ffprobe's reason when it cannot read a file", async () => {
    const garbage = path.join(dir, "garbage.mp4");
    await fs.writeFile(garbage, "definitely not a video ".repeat(50));
    for (const options of [{}, { ffprobePath: null, ffmpegPath: fallbackFfmpeg() }]) {
      const error = await probeVideo(garbage, options).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(IwrError);
      expect((error as IwrError).code).toBe("MEDIA");
      expect((error as IwrError).message).toMatch(
        new RegExp(`^${garbage.replace(/[.]/g, "\\.")}: ffprobe could not read it: .*Invalid data found when processing input`),
      );
    }
  });

  it("reports a missing file as such", async () => {
    const missing = path.join(dir, "nope.mp4");
    await expect(probeVideo(missing)).rejects.toThrow(`${missing}: ffprobe could not read it: No such file or directory`);
  });

  it("rejects a file with no video stream", async () => {
    const audio = path.join(dir, "tone.m4a");
    await run(findFfmpeg()!.path, ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", audio]);
    await expect(probeVideo(audio)).rejects.toThrow(`${audio}: ffprobe could not read it: it holds no video stream`);
  });
});

describe("probeImage", () => {
  it("reads a PNG header and rejects a file that is not an image", async () => {
    const png = path.join(dir, "a.png");
    await makeTestPng(png, { width: 40, height: 30 });
    expect(await probeImage(png)).toEqual({ width: 40, height: 30, format: "png" });
    const fake = path.join(dir, "fake.png");
    await fs.writeFile(fake, "text");
    await expect(probeImage(fake)).rejects.toThrow(`${fake}: not a readable image: `);
  });
});
