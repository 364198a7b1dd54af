/**
 * The stderr reader behind video states, on what a real ffmpeg prints: output frame sizes
 * and the container's duration from the headers, error lines kept (bounded), and a video
 * whose container states no duration taking it from its decoded frames.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frameSizeOf, pixelLayoutOf, splitTopLevel } from "../../src/media/ffmpeg-header-fields.ts";
import { type FfmpegHeader, FfmpegLog } from "../../src/media/ffmpeg-log.ts";
import { videoStates } from "../../src/media/video-states.ts";
import { findFfmpeg } from "../../src/setup/find-tools.ts";

const run = promisify(execFile);
let dir: string;
let ffmpeg: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-ffmpeg-log-"));
  ffmpeg = findFfmpeg()!.path;
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** ffmpeg's stderr for decoding `input` into two raw outputs, as the video-state pass runs it. */
async function stderrOf(input: string): Promise<string> {
  const args = [
    "-hide_banner",
    "-nostats",
    "-v",
    "level+info",
    "-nostdin",
    "-i",
    input,
    "-an",
    "-filter_complex",
    "fps=5,split=2[a][b];[a]scale=160:-2,format=gray[grey];[b]format=yuv420p[full]",
    "-map",
    "[grey]",
    "-f",
    "rawvideo",
    "-y",
    "/dev/null",
    "-map",
    "[full]",
    "-f",
    "rawvideo",
    "-y",
    "/dev/null",
  ];
  try {
    return (await run(ffmpeg, args, { maxBuffer: 1 << 24 })).stderr;
  } catch (error) {
    return (error as { stderr: string }).stderr;
  }
}

function read(stderr: string, chunkSize: number): { log: FfmpegLog; announced: FfmpegHeader[] } {
  const announced: FfmpegHeader[] = [];
  const log = new FfmpegLog(2, (header) => announced.push(header));
  for (let at = 0; at < stderr.length; at += chunkSize) log.push(stderr.slice(at, at + chunkSize));
  log.end();
  return { log, announced };
}

describe("ffmpeg's stderr", () => {
  it("gives each output's frame size and the container's duration, once, however the text is cut", async () => {
    const video = path.join(dir, "clip.mp4");
    await run(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=640x360:r=10:d=2.5", "-c:v", "libx264", "-pix_fmt", "yuv420p", video]);
    const stderr = await stderrOf(video);
    for (const chunkSize of [7, 100, stderr.length]) {
      const { log, announced } = read(stderr, chunkSize);
      expect(announced, `chunks of ${chunkSize}`).toEqual([
        {
          durationSec: 2.5,
          outputs: [
            { width: 160, height: 90, layout: { pixelFormat: "gray", range: "full" } },
            { width: 640, height: 360, layout: { pixelFormat: "yuv420p", range: "limited" } },
          ],
        },
      ]);
      expect(log.errors).toBe("");
    }
  });

  it("keeps the error lines, without their level tag, and names a file ffmpeg cannot read", async () => {
    const bad = path.join(dir, "bad.mp4");
    fs.writeFileSync(bad, "not a video at all\n");
    const { log, announced } = read(await stderrOf(bad), 64);
    expect(announced).toEqual([]);
    expect(log.errors).toContain("Invalid data found when processing input");
    expect(log.errors).not.toContain("[error]");
    const flood = new FfmpegLog(1, () => undefined);
    for (let i = 0; i < 2000; i++) flood.push(`[h264 @ 0x55d5] [error] broken slice ${i}\n`);
    expect(flood.errors.length).toBeLessThanOrEqual(4000);
    expect(flood.errors).toMatch(/broken slice 1999$/);
  });

  it("reads the pixel layout of a stream line: format, range (limited unless pc) and the matrix named first", () => {
    expect(pixelLayoutOf(splitTopLevel("rawvideo (I420 / 0x30323449), yuv420p(tv, bt709/unknown/unknown, progressive), 1280x720 [SAR 1:1 DAR 16:9]"))).toEqual({
      pixelFormat: "yuv420p",
      range: "limited",
      matrix: "bt709",
    });
    expect(pixelLayoutOf(splitTopLevel("rawvideo (I420 / 0x30323449), yuv420p(pc, smpte170m, progressive), 640x360"))).toEqual({
      pixelFormat: "yuv420p",
      range: "full",
      matrix: "smpte170m",
    });
    expect(pixelLayoutOf(splitTopLevel("rawvideo (I420 / 0x30323449), yuv420p(progressive), 640x360"))).toEqual({ pixelFormat: "yuv420p", range: "limited" });
    expect(pixelLayoutOf(splitTopLevel("rawvideo (RGB[24] / 0x18424752), rgb24, 1280x720, 5 fps"))).toEqual({ pixelFormat: "rgb24", range: "limited" });
  });

  it("reads the size among a stream line's fields, not a codec tag's hex", () => {
    expect(
      frameSizeOf(splitTopLevel("rawvideo (Y800 / 0x30303859), gray(pc, bt470bg/unknown/unknown, progressive), 320x180 [SAR 1:1 DAR 16:9], q=2-31")),
    ).toEqual({ width: 320, height: 180 });
    expect(frameSizeOf(splitTopLevel("rawvideo (RGB[24] / 0x18424752), rgb24, 1280x720, 5 fps"))).toEqual({ width: 1280, height: 720 });
    expect(frameSizeOf(splitTopLevel("rawvideo (RGB[24] / 0x18424752), rgb24"))).toBeUndefined();
  });

  it("a video whose container states no duration takes it from the frames decoded", async () => {
    const video = path.join(dir, "bare.h264");
    await run(ffmpeg, [
      "-v",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      "color=c=0x3060d0:s=320x240:r=10:d=3",
      "-c:v",
      "libx264",
      "-pix_fmt",
      "yuv420p",
      "-f",
      "h264",
      video,
    ]);
    expect(await stderrOf(video)).toMatch(/Duration: N\/A/);
    const result = await videoStates(video, { cacheDir: path.join(dir, "cache") });
    expect(result.video.durationSec).toBeCloseTo(result.analysis.frames / 5, 5);
    expect(result.video.durationSec).toBeGreaterThan(2);
    expect(result.states).toHaveLength(1);
  });
});

describe("an ffmpeg that prints no headers", () => {
  it("is a MEDIA error naming it, never a hang or frames read without their size", async () => {
    // Real ffmpeg with its stderr thrown away: grey frames come, headers never do. Task 4's
    // 20 s make 10 segment files of them, so the error comes when ffmpeg exits (a video of
    // over 200 s would reach the 100 segments let through first, and the same error).
    const silent = path.join(dir, "silent-ffmpeg.sh");
    fs.writeFileSync(silent, `#!/bin/sh\nexec "${ffmpeg}" "$@" 2>/dev/null\n`, { mode: 0o755 });
    const before = process.env.IWR_FFMPEG;
    process.env.IWR_FFMPEG = silent;
    try {
      await expect(videoStates("tasks/iwr-mini/4/video.mp4", { cacheDir: path.join(dir, "cache-silent") })).rejects.toMatchObject({
        code: "MEDIA",
        message: expect.stringMatching(/silent-ffmpeg\.sh.*without the output headers/),
      });
    } finally {
      if (before === undefined) delete process.env.IWR_FFMPEG;
      else process.env.IWR_FFMPEG = before;
    }
  });
});
describe("an ffmpeg that fails half-way through a frame", () => {
  it("is ffmpeg's own error, with the half frame as its cause, never an unhandled rejection", async () => {
    // Real ffmpeg does the pass, then, as a full disk would leave things, its last grey
    // segment gets half a frame more and it exits saying why.
    const failing = path.join(dir, "disk-full-ffmpeg.sh");
    fs.writeFileSync(
      failing,
      [
        "#!/bin/sh",
        `"${ffmpeg}" "$@" || exit $?`,
        'for arg in "$@"; do case "$arg" in *grey-%06d.raw) grey_dir=$(dirname "$arg");; esac; done',
        'last=$(ls "$grey_dir" | sort | tail -n 1)',
        'printf "half" >> "$grey_dir/$last"',
        'echo "[error] Error writing trailer: No space left on device" >&2',
        "exit 1",
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const before = process.env.IWR_FFMPEG;
    process.env.IWR_FFMPEG = failing;
    try {
      const failure = await videoStates("tasks/iwr-mini/4/video.mp4", { cacheDir: path.join(dir, "cache-disk-full") }).then(
        () => undefined,
        (error: unknown) => error as Error & { code?: string; cause?: unknown },
      );
      expect(failure?.code).toBe("MEDIA");
      expect(failure?.message).toMatch(/ffmpeg cannot read video .*No space left on device/);
      expect(String((failure?.cause as Error | undefined)?.message)).toMatch(/grey-\d{6}\.raw holds \d+ bytes, not a whole number of 57600-byte frames/);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      if (before === undefined) delete process.env.IWR_FFMPEG;
      else process.env.IWR_FFMPEG = before;
    }
  });
});
