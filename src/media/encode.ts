/**
 * Turning timestamped still frames into the benchmark's video: H.264, yuv420p,
 * constant frame rate, `+faststart`. Capture (a screencast) only delivers a frame
 * when the page changes, so each frame is held until the next one arrives and the
 * last one until the recording stopped; ffmpeg's concat demuxer takes exactly that
 * (a file plus how long it stays on screen), and the `fps` filter then duplicates or
 * drops frames onto a fixed grid, which is what "constant frame rate" means.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";

const logger = log("media");

export interface TimedFrame {
  /** An image file ffmpeg can read (JPEG or PNG). */
  readonly file: string;
  /** When it appeared, in seconds on any clock shared by all frames and `endSec`. */
  readonly timeSec: number;
}

export interface EncodeOptions {
  readonly ffmpegPath: string;
  readonly outFile: string;
  /** When the recording stopped, on the frames' clock: the last frame is held until then. */
  readonly endSec: number;
  /** Output size; odd sizes are rounded down to even (yuv420p needs even sides). */
  readonly width: number;
  readonly height: number;
  /** Constant output frame rate. 10 is plenty for a cursor moving and 1 fps sampling. */
  readonly fps?: number;
  /** x264 quality (lower is better). 23 keeps small UI text readable. */
  readonly crf?: number;
}

export interface EncodedVideo {
  readonly file: string;
  readonly durationSec: number;
  readonly fps: number;
}

/** Seconds written with fixed precision so the concat list is reproducible. */
function seconds(value: number): string {
  return Math.max(value, 0.001).toFixed(6);
}

function quoteForConcat(file: string): string {
  // The concat demuxer's own quoting: single quotes, with ' written as '\''.
  return `'${file.replace(/'/g, "'\\''")}'`;
}

/** The concat demuxer's input: each frame with how long it stays on screen. */
export function concatList(frames: readonly TimedFrame[], endSec: number): string {
  const sorted = [...frames].sort((a, b) => a.timeSec - b.timeSec);
  const lines: string[] = ["ffconcat version 1.0"];
  sorted.forEach((frame, index) => {
    const next = sorted[index + 1];
    const until = next ? next.timeSec : Math.max(endSec, frame.timeSec);
    lines.push(`file ${quoteForConcat(path.resolve(frame.file))}`, `duration ${seconds(until - frame.timeSec)}`);
  });
  // The demuxer ignores the last entry's duration unless the file is listed once more.
  const last = sorted.at(-1);
  if (last) lines.push(`file ${quoteForConcat(path.resolve(last.file))}`);
  return lines.join("\n") + "\n";
}

function runFfmpeg(ffmpegPath: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on("error", (error) => reject(new IwrError("MEDIA", `cannot run ffmpeg at ${ffmpegPath}: ${error.message}`, { ffmpegPath })));
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject(new IwrError("MEDIA", `ffmpeg exited with code ${code}: ${stderr.trim().split("\n").slice(-3).join(" | ")}`, { args }));
    });
  });
}

/**
 * The frames, every one at the size most of them have (the larger on a tie): a frame of
 * another size is scaled to it into a copy beside `outFile`, listed in `copies` as it is
 * made, for the caller to remove. ffmpeg lost frames at a change of picture size within
 * the concat list: it dropped such a frame and shifted the ones after it, so a state went
 * missing from the video. Chromium's screencast sends one now and then: half-size frames
 * among full-size ones, probably while the at-rest wait takes its half-size look at the
 * page (browser/settle.ts).
 */
async function framesOfOneSize(frames: readonly TimedFrame[], outFile: string, copies: string[]): Promise<TimedFrame[]> {
  const sizes = await Promise.all(
    frames.map(async (frame) => {
      try {
        const { width, height } = await sharp(frame.file).metadata();
        if (!width || !height) throw new Error("it has no picture size");
        return { width, height };
      } catch (error) {
        throw new IwrError("MEDIA", `cannot read the captured frame ${frame.file}: ${errorMessage(error)}`);
      }
    }),
  );
  const tally = new Map<string, { width: number; height: number; count: number }>();
  for (const { width, height } of sizes) {
    const entry = tally.get(`${width}x${height}`) ?? { width, height, count: 0 };
    entry.count += 1;
    tally.set(`${width}x${height}`, entry);
  }
  const { width, height } = [...tally.values()].sort((a, b) => b.count - a.count || b.width * b.height - a.width * a.height)[0]!;
  const scaled = await Promise.allSettled(
    frames.map(async (frame, index) => {
      const size = sizes[index]!;
      if (size.width === width && size.height === height) return frame;
      const copy = `${outFile}.resized-${index}${path.extname(frame.file)}`;
      copies.push(copy);
      // The copy's extension picks its format, as the frame's did: the list takes one kind of picture.
      const resized = sharp(frame.file).resize(width, height, { fit: "fill" });
      await (/\.jpe?g$/i.test(copy) ? resized.jpeg({ quality: 90 }) : resized).toFile(copy);
      return { file: copy, timeSec: frame.timeSec };
    }),
  );
  const failed = scaled.find((result) => result.status === "rejected");
  if (failed) {
    throw new IwrError("MEDIA", `cannot scale a captured frame to ${width}x${height}: ${errorMessage(failed.reason)}`);
  }
  if (copies.length > 0) logger.debug(`scaled ${copies.length} frame(s) of another size to ${width}x${height} before encoding`);
  return scaled.map((result) => (result as PromiseFulfilledResult<TimedFrame>).value);
}

/** Encodes the frames into `outFile` (overwritten). Needs at least one frame. */
export async function encodeFramesToMp4(frames: readonly TimedFrame[], options: EncodeOptions): Promise<EncodedVideo> {
  if (frames.length === 0) throw new IwrError("MEDIA", "no frames were captured: nothing to encode");
  const fps = options.fps ?? 10;
  const width = options.width - (options.width % 2);
  const height = options.height - (options.height % 2);
  const first = Math.min(...frames.map((frame) => frame.timeSec));
  const listFile = `${options.outFile}.frames.txt`;
  const copies: string[] = [];
  const started = Date.now();
  try {
    fs.writeFileSync(listFile, concatList(await framesOfOneSize(frames, options.outFile, copies), options.endSec));
    await runFfmpeg(options.ffmpegPath, [
      "-v",
      "error",
      "-y",
      "-f",
      "concat",
      "-safe",
      "0",
      "-i",
      listFile,
      "-vf",
      `fps=${fps},scale=${width}:${height}:flags=bicubic,format=yuv420p`,
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-crf",
      String(options.crf ?? 23),
      "-pix_fmt",
      "yuv420p",
      "-r",
      String(fps),
      "-movflags",
      "+faststart",
      "-an",
      "-map_metadata",
      "-1",
      options.outFile,
    ]);
  } finally {
    fs.rmSync(listFile, { force: true });
    for (const copy of copies) fs.rmSync(copy, { force: true });
  }
  const durationSec = Math.max(options.endSec - first, 0);
  logger.debug(`encoded ${frames.length} frames (${durationSec.toFixed(1)} s) into ${options.outFile} in ${Date.now() - started} ms`);
  return { file: options.outFile, durationSec, fps };
}
