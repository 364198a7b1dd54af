/**
 * Video states on real H.264 videos made from drawn frames: a blinking caret or a
 * gliding cursor dot never splits a state, a change as small as one digit does; constant
 * motion has no state, a one-frame video is one state, an unreadable file is an error;
 * results are cached by content. And on the bundled suite: every checkpoint's best
 * matching state comes in trajectory order (the test reads the truth; the library never does).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { videoStates } from "../../src/media/video-states.ts";
import { findFfmpeg } from "../../src/setup/find-tools.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import { SCREEN_HEIGHT as H, makeScreenVideo, SCREEN_WIDTH as W } from "../support/synthetic-screens.ts";
import { captureWarnings, type WarningCapture } from "../support/warnings.ts";

const run = promisify(execFile);
let dir: string;
let cacheDir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-video-states-"));
  cacheDir = path.join(dir, "cache");
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("video states", () => {
  it("a still page with a blinking caret is one state", async () => {
    const video = await makeScreenVideo(dir, "caret", 5, (t) => ({ caret: Math.floor(t / 0.5) % 2 === 0, digit: 7 }));
    const result = await videoStates(video, { cacheDir });
    expect(result.states).toHaveLength(1);
    expect(result.states[0]).toMatchObject({ startSec: 0 });
    expect(result.states[0]!.endSec).toBeGreaterThanOrEqual(4.8);
    expect(result.findings).toEqual([]);
  });

  it("a cursor dot that glides across the page and comes to rest does not split it", async () => {
    const from = { x: 100, y: 200 };
    const to = { x: 500, y: 150 };
    const video = await makeScreenVideo(dir, "glide", 5, (t) => {
      const progress = Math.min(1, Math.max(0, (t - 1.5) / 0.6));
      return { digit: 7, dot: { x: from.x + (to.x - from.x) * progress, y: from.y + (to.y - from.y) * progress } };
    });
    const result = await videoStates(video, { cacheDir });
    expect(result.states.map((state) => [state.startSec, state.endSec])).toEqual([[0, 5]]);
  });

  it("a change as small as one digit starts a new state, also while the dot moves", async () => {
    const video = await makeScreenVideo(dir, "digit", 6, (t) => ({
      digit: t < 2.5 ? 7 : 8,
      dot: { x: 200 + Math.min(1, Math.max(0, (t - 2.2) / 0.6)) * 300, y: 220 },
    }));
    const result = await videoStates(video, { cacheDir });
    expect(result.states).toHaveLength(2);
    expect(result.states[0]!.endSec).toBeCloseTo(2.6, 0);
    expect(result.states[1]!.startSec).toBeCloseTo(2.6, 0);
    // The representative frames show each digit: they differ where the digit is.
    const [first, second] = await Promise.all(
      result.states.map((state) => sharp(state.framePath).extract({ left: 552, top: 36, width: 40, height: 48 }).greyscale().raw().toBuffer()),
    );
    expect(first!.equals(second!)).toBe(false);
  });

  it("constant motion has no stable state, and says so", async () => {
    // ffmpeg's moving test pattern: something on it changes in every frame.
    const video = path.join(dir, "motion.mp4");
    await run(findFfmpeg()!.path, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=10:d=3", "-c:v", "libx264", "-pix_fmt", "yuv420p", video]);
    const result = await videoStates(video, { cacheDir });
    expect(result.states).toEqual([]);
    expect(result.findings).toEqual([
      expect.stringMatching(/^no stable state: the screen never holds still for 0\.4 s \(constant motion, \d+ changes in 3\.0 s\)$/),
    ]);
  });

  it("a one-frame video is its one state, with a finding", async () => {
    const video = await makeScreenVideo(dir, "one-frame", 0.1, () => ({ digit: 8 }));
    const result = await videoStates(video, { cacheDir });
    expect(result.states).toHaveLength(1);
    expect(result.findings).toEqual([expect.stringMatching(/^the video is only 0\.\d s \(1 analysis frame\(s\)\): it is taken as one state$/)]);
  });

  it("an unreadable video is an error naming the file", async () => {
    const bad = path.join(dir, "broken.mp4");
    fs.writeFileSync(bad, "this is not a video");
    await expect(videoStates(bad, { cacheDir })).rejects.toMatchObject({ code: "MEDIA", message: expect.stringContaining(bad) });
  });

  it("saves each state's frame in the colours drawn, whatever matrix and range the stream declares", async () => {
    const drawn = [0xd0, 0x30, 0x20];
    const encodings = [
      { name: "bt709-limited", matrix: "bt709", range: "tv", colorspace: "bt709" },
      { name: "bt601-limited", matrix: "bt601", range: "tv", colorspace: "smpte170m" },
      { name: "bt709-full", matrix: "bt709", range: "pc", colorspace: "bt709" },
    ];
    for (const encoding of encodings) {
      const video = path.join(dir, `colour-${encoding.name}.mp4`);
      const outRange = encoding.range === "pc" ? "full" : "limited";
      await run(findFfmpeg()!.path, [
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "color=c=0xd03020:s=320x180:r=10:d=1.5",
        "-vf",
        `scale=out_color_matrix=${encoding.matrix}:out_range=${outRange},format=yuv420p`,
        "-c:v",
        "libx264",
        "-colorspace",
        encoding.colorspace,
        "-color_range",
        encoding.range,
        video,
      ]);
      const result = await videoStates(video, { cacheDir });
      expect(result.states, encoding.name).toHaveLength(1);
      const pixel = await sharp(result.states[0]!.framePath).extract({ left: 160, top: 90, width: 1, height: 1 }).raw().toBuffer();
      for (const [channel, value] of drawn.entries())
        expect(Math.abs(pixel[channel]! - value), `${encoding.name} channel ${channel}: ${[...pixel].join(",")}`).toBeLessThanOrEqual(6);
    }
  });

  it("brings other pixel formats to the colours drawn too: 4:4:4, RGB, full-range JPEG, 10-bit, and an odd size", async () => {
    // Each is converted by ffmpeg to the 4:2:0 the pass reads, and its output header says with what range.
    const ffmpeg = findFfmpeg()!.path;
    const sources = [
      { name: "yuv444p.mp4", size: "320x180", codec: ["-c:v", "libx264", "-pix_fmt", "yuv444p"] },
      { name: "rgb.mkv", size: "320x180", codec: ["-c:v", "ffv1", "-pix_fmt", "bgr0"] },
      { name: "mjpeg.avi", size: "320x180", codec: ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p", "-q:v", "2"] },
      { name: "ten-bit.mkv", size: "320x180", codec: ["-c:v", "ffv1", "-pix_fmt", "yuv420p10le"] },
      // (the colour source makes even sizes only: scaled after it)
      { name: "odd.mkv", size: "321x181", codec: ["-vf", "scale=321:181", "-c:v", "ffv1", "-pix_fmt", "yuv444p"] },
    ];
    for (const source of sources) {
      const video = path.join(dir, `format-${source.name}`);
      await run(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=0xd03020:s=320x180:r=10:d=1.5", ...source.codec, video]);
      const result = await videoStates(video, { cacheDir });
      expect(result.states, source.name).toHaveLength(1);
      const image = sharp(result.states[0]!.framePath);
      const meta = await image.metadata();
      expect(`${meta.width}x${meta.height}`, source.name).toBe(source.size);
      // The middle, and the last row and column, which an odd size converts on their own.
      for (const [left, top] of [
        [160, 90],
        [meta.width! - 1, 90],
        [160, meta.height! - 1],
      ] as const) {
        const pixel = await sharp(result.states[0]!.framePath).extract({ left, top, width: 1, height: 1 }).raw().toBuffer();
        for (const [channel, value] of [0xd0, 0x30, 0x20].entries())
          expect(Math.abs(pixel[channel]! - value), `${source.name} (${left},${top}) channel ${channel}: ${[...pixel].join(",")}`).toBeLessThanOrEqual(6);
      }
    }
  });

  it("leaves no full-size frames behind, after a pass or a failed one, and sweeps what a killed pass left", async () => {
    const video = await makeScreenVideo(dir, "temps", 2, (t) => ({ digit: t < 1 ? 7 : 8 }));
    const ownCache = path.join(dir, "temps-cache");
    const first = await videoStates(video, { cacheDir: ownCache });
    const entry = path.dirname(path.dirname(first.states[0]!.framePath));
    expect(fs.readdirSync(entry).sort()).toEqual(["frames", "states.json"]);
    // A pass killed mid-way (a process that no longer exists) left its temp folder of frames.
    const abandoned = path.join(entry, ".decoded-frames.elsewhere~999999.1.abc.tmp");
    fs.mkdirSync(path.join(abandoned, "full"), { recursive: true });
    fs.writeFileSync(path.join(abandoned, "full", "full-000000.raw"), Buffer.alloc(1000));
    fs.rmSync(path.join(entry, "states.json"));
    await videoStates(video, { cacheDir: ownCache });
    expect(fs.readdirSync(entry).sort()).toEqual(["frames", "states.json"]);
    // A video that fails half-way (cut short) leaves nothing either.
    const cut = path.join(dir, "cut.mp4");
    const whole = fs.readFileSync(video);
    fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
    await videoStates(cut, { cacheDir: ownCache }).catch(() => undefined);
    for (const name of fs.readdirSync(ownCache))
      expect(
        fs.readdirSync(path.join(ownCache, name)).filter((file) => file.endsWith(".tmp")),
        name,
      ).toEqual([]);
  });

  it("reads videos of any size and container: the frame sizes ffmpeg's headers report fit its frames", async () => {
    // Narrower than the analysis width, not 16:9, an aspect that rounds; FFV1 in Matroska.
    for (const [size, expected] of [
      ["200x150", [200, 150]],
      ["1000x562", [320, 180]],
      ["334x182", [320, 174]],
    ] as const) {
      const video = path.join(dir, `size-${size}.mkv`);
      await run(findFfmpeg()!.path, [
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        `color=c=0x3060d0:s=${size}:r=10:d=1`,
        "-c:v",
        "ffv1",
        "-pix_fmt",
        "yuv420p",
        video,
      ]);
      const result = await videoStates(video, { cacheDir });
      expect([result.analysis.width, result.analysis.height], size).toEqual(expected);
      expect(result.states, size).toHaveLength(1);
      const meta = await sharp(result.states[0]!.framePath).metadata();
      expect(`${meta.width}x${meta.height}`).toBe(size);
    }
  });

  it("turns a rotated video upright, and reads one far wider than tall", async () => {
    const ffmpeg = findFfmpeg()!.path;
    const stored = path.join(dir, "landscape.mp4");
    const rotated = path.join(dir, "rotated.mp4");
    await run(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=0x208040:s=640x360:r=10:d=3", "-c:v", "libx264", "-pix_fmt", "yuv420p", stored]);
    await run(ffmpeg, ["-v", "error", "-y", "-i", stored, "-c", "copy", "-metadata:s:v", "rotate=90", rotated]);
    const upright = await videoStates(rotated, { cacheDir });
    expect([upright.video.width, upright.video.height]).toEqual([360, 640]);
    expect([upright.analysis.width, upright.analysis.height]).toEqual([320, 569]);
    expect(upright.states.map((state) => [state.startSec, state.endSec])).toEqual([[0, 3]]);
    const meta = await sharp(upright.states[0]!.framePath).metadata();
    expect([meta.width, meta.height]).toEqual([360, 640]);

    const wide = path.join(dir, "wide.mp4");
    await run(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=0x208040:s=2000x2:r=10:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p", wide]);
    const strip = await videoStates(wide, { cacheDir });
    expect([strip.analysis.width, strip.analysis.height]).toEqual([320, 1]);
    expect(strip.states).toHaveLength(1);
  });

  it("keeps a short state that follows a long one of any length (its only sample is not thinned away)", async () => {
    // A long dark run, 0.4 s bright, 3 s grey: thinning the long run's samples once dropped the bright
    // state's one sample (at 6.8 s). Every long-run length from 4.0 to 8.8 s, so each thinning phase is met.
    const colour = (name: string, seconds: number) => ["-f", "lavfi", "-i", `color=c=${name}:s=320x180:r=10:d=${seconds}`];
    for (let tenths = 40; tenths <= 88; tenths += 4) {
      const long = tenths / 10;
      const video = path.join(dir, `short-after-long-${tenths}.mp4`);
      await run(findFfmpeg()!.path, [
        "-v",
        "error",
        "-y",
        ...colour("0x101010", long),
        ...colour("0xf0f0f0", 0.4),
        ...colour("0x808080", 3),
        "-filter_complex",
        "[0][1][2]concat=n=3:v=1[out]",
        "-map",
        "[out]",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        video,
      ]);
      const result = await videoStates(video, { cacheDir });
      const spans = result.states.map((state) => [state.startSec, state.endSec]);
      expect(spans, `after ${long} s`).toEqual([
        [0, long],
        [long, Math.round((long + 0.4) * 10) / 10],
        [Math.round((long + 0.4) * 10) / 10, Math.round((long + 3.4) * 10) / 10],
      ]);
      const middle = await sharp(result.states[1]!.framePath).extract({ left: 160, top: 90, width: 1, height: 1 }).raw().toBuffer();
      expect(middle[0], `after ${long} s`).toBeGreaterThan(200);
    }
  });

  it("caches by content: a second call reads states.json and content-addressed full-size PNGs", async () => {
    const video = await makeScreenVideo(dir, "cached", 3, (t) => ({ digit: t < 1.5 ? 7 : 8 }));
    const first = await videoStates(video, { cacheDir });
    const copy = path.join(dir, "cached-copy.mp4");
    fs.copyFileSync(video, copy);
    const second = await videoStates(copy, { cacheDir });
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.video.path).toBe(copy);
    expect(second.states.map((state) => state.frameSha256)).toEqual(first.states.map((state) => state.frameSha256));
    for (const state of second.states) {
      const png = fs.readFileSync(state.framePath);
      expect(createHash("sha256").update(png).digest("hex")).toBe(state.frameSha256);
      expect(path.basename(state.framePath)).toBe(`${state.frameSha256}.png`);
      const meta = await sharp(png).metadata();
      expect([meta.width, meta.height]).toEqual([W, H]);
    }
  });
});

describe("a damaged video-states cache", () => {
  // Each way a cache entry can be damaged: a truncated frame (a killed copy, a full disk), a
  // frame overwritten with other bytes of the same length, a truncated or empty states.json,
  // one of another shape. Each is moved aside with a warning naming it, and recomputed.
  const damages: Array<{ name: string; damage: (entry: { record: string; frame: string }) => void; moved: "record" | "frame" }> = [
    { name: "a truncated PNG frame", damage: ({ frame }) => fs.truncateSync(frame, 300), moved: "frame" },
    {
      name: "a frame of the same length with other bytes",
      damage: ({ frame }) => fs.writeFileSync(frame, Buffer.alloc(fs.statSync(frame).size, 7)),
      moved: "frame",
    },
    { name: "a truncated states.json", damage: ({ record }) => fs.truncateSync(record, Math.floor(fs.statSync(record).size / 2)), moved: "record" },
    { name: "an empty states.json", damage: ({ record }) => fs.writeFileSync(record, ""), moved: "record" },
    {
      name: "a states.json of another shape",
      damage: ({ record }) => fs.writeFileSync(record, JSON.stringify({ ...JSON.parse(fs.readFileSync(record, "utf8")), states: "none" })),
      moved: "record",
    },
  ];
  let warnings: WarningCapture;
  beforeAll(() => (warnings = captureWarnings()));
  afterAll(() => warnings.stop());

  for (const [index, { name, damage, moved }] of damages.entries()) {
    it(`${name}: a warning naming the file, moved aside as .corrupt, the same states computed again`, async () => {
      const damagedCache = path.join(dir, `damaged-${index}`);
      const video = await makeScreenVideo(dir, `damaged-${index}`, 3, (t) => ({ digit: t < 1.5 ? 7 : 8 }));
      const first = await videoStates(video, { cacheDir: damagedCache });
      const record = path.join(path.dirname(path.dirname(first.states[0]!.framePath)), "states.json");
      const target = moved === "record" ? record : first.states[0]!.framePath;
      damage({ record, frame: first.states[0]!.framePath });

      const again = await videoStates(video, { cacheDir: damagedCache });
      expect(again.cached).toBe(false);
      expect(again.states.map((state) => [state.startSec, state.endSec, state.frameSha256])).toEqual(
        first.states.map((state) => [state.startSec, state.endSec, state.frameSha256]),
      );
      expect(fs.existsSync(`${target}.corrupt`)).toBe(true);
      for (const state of again.states) await sharp(state.framePath).raw().toBuffer();
      const said = await warnings.messages();
      expect(said.some((message) => message.includes(target) && message.includes("moved aside") && message.includes("computed again"))).toBe(true);
      // And the recomputed entry is a good one: the next call reads it from the cache.
      expect((await videoStates(video, { cacheDir: damagedCache })).cached).toBe(true);
    });
  }
});

describe("video states of the bundled suite", () => {
  /** Share of pixels (at 320×180, grey) that differ by more than 24 levels. */
  async function greySmall(file: string): Promise<Buffer> {
    return sharp(file).resize(320, 180, { fit: "fill" }).greyscale().raw().toBuffer();
  }
  const similarity = (a: Buffer, b: Buffer) => {
    let changed = 0;
    for (let i = 0; i < a.length; i++) if (Math.abs(a[i]! - b[i]!) > 24) changed += 1;
    return 1 - changed / a.length;
  };
  // A page that returns to an earlier look (a reset, "back to top") matches two states
  // equally well but for the cursor dot: states within this much of the best are ties.
  const TIE = 0.002;

  it("each checkpoint's best-matching state comes in trajectory order", async () => {
    for (const task of await loadTasks("tasks/iwr-mini.jsonl")) {
      const result = await videoStates(task.inputs.videoPath, { cacheDir });
      expect(result.states.length, `task ${task.id}`).toBeGreaterThanOrEqual(task.truth.checkpointPaths.length);
      const states = await Promise.all(result.states.map((state) => greySmall(state.framePath)));
      let previous = -1;
      for (const [step, checkpoint] of task.truth.checkpointPaths.entries()) {
        const grey = await greySmall(checkpoint);
        const values = states.map((state) => similarity(grey, state));
        const best = Math.max(...values);
        const next = values.findIndex((value, index) => index >= previous && value >= best - TIE);
        expect(
          next,
          `task ${task.id} checkpoint ${step}: ` +
            `best-matching states ${values.map((v, i) => (v >= best - TIE ? i : -1)).filter((i) => i >= 0)} come before state ${previous}`,
        ).toBeGreaterThanOrEqual(0);
        previous = next;
      }
    }
  }, 240_000);
});
