/**
 * Frame sampling for generation (docs/protocol.md §2): one frame per second, and for a
 * video longer than `maxFrames` seconds exactly `maxFrames` frames evenly spaced over it.
 *
 * One ffmpeg process per video decodes it once, front to back: the `fps` filter picks
 * the frames (seeking once per frame is about ten times slower), an optional `scale`
 * shrinks them in the same filter chain, and PNGs stream back over a pipe.
 *
 * A frame at time t is the picture on screen at t: the last decoded frame whose
 * timestamp is at or before t (`round=up`). The filter also repeats a frame across the
 * gaps of a variable-frame-rate recording, so spacing stays even in time.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { PROTOCOL } from "../protocol.ts";
import { findFfmpeg } from "../setup/find-tools.ts";
import { readMp4DurationSec } from "./mp4-duration.ts";
import { probeVideo } from "./probe.ts";

export interface SampleFramesOptions {
  /** Frames per second of video; default PROTOCOL.framesPerSecond (1). */
  fps?: number;
  /** At most this many frames; a longer video gets exactly this many, evenly spaced. Default PROTOCOL.maxVideoFrames (64). */
  maxFrames?: number;
  /** Shrink frames so their longer side is at most this many pixels (never enlarged). */
  maxSide?: number;
  /** The video's duration when the caller has probed it already (skips a probe). */
  durationSec?: number;
  /** Frames for a fractional duration: `ceil` (default, the last partial second too) or `floor` (the harness's int(duration)). */
  count?: FrameCountRule;
}

export type FrameCountRule = "ceil" | "floor";

export interface SampledFrame {
  /** 0-based position in the sampled sequence. */
  index: number;
  /** The moment of the video this frame shows, in seconds from its start. */
  timeSec: number;
  png: Buffer;
}

export interface FramePlan {
  /** Number of frames to take. */
  count: number;
  /** Sampling rate in frames per second (1 for short videos, count/duration for long ones). */
  rate: number;
  /** The moment each frame shows, in seconds. */
  times: number[];
}

/** Tolerance for container durations such as 10.000001 s, which must not earn an 11th frame. */
const DURATION_EPSILON_SEC = 1e-3;
const STDERR_TAIL_CHARS = 2000;
/** Frames a sampling may come up short of its plan (a container rounding its duration up). */
const MISSING_FRAMES_TOLERATED = 1;

/** Float noise in a duration such as 9.999999999 s, which int() in the harness would still floor to 10 frames' worth. */
const FLOOR_EPSILON = 1e-9;

/**
 * Which moments to sample from a video of `durationSec`: every 1/fps seconds from 0 while
 * that fits in `maxFrames`, otherwise exactly `maxFrames` moments evenly spaced.
 * `ceil` counts a last partial second (10.5 s → 11 frames, never fewer than 1); `floor`
 * is the harness's extract_frames: int(duration · fps) frames (10.5 s → 10, a 0.5 s video
 * → none), evenly spaced once the duration exceeds maxFrames.
 */
export function planFrames(
  durationSec: number,
  fps: number = PROTOCOL.framesPerSecond,
  maxFrames: number = PROTOCOL.maxVideoFrames,
  count: FrameCountRule = "ceil",
): FramePlan {
  if (!(durationSec > 0) || !Number.isFinite(durationSec)) {
    throw new IwrError("MEDIA", `cannot sample frames: video duration must be a positive number of seconds, got ${durationSec}`);
  }
  if (!(fps > 0)) throw new IwrError("MEDIA", `cannot sample frames: fps must be positive, got ${fps}`);
  if (!Number.isInteger(maxFrames) || maxFrames < 0) {
    throw new IwrError("MEDIA", `cannot sample frames: maxFrames must be a non-negative integer, got ${maxFrames}`);
  }
  if (maxFrames === 0) return { count: 0, rate: fps, times: [] };
  const natural = count === "floor" ? Math.floor(durationSec * fps + FLOOR_EPSILON) : Math.max(1, Math.ceil(durationSec * fps - DURATION_EPSILON_SEC));
  const evenlySpaced = count === "floor" ? durationSec * fps > maxFrames : natural > maxFrames;
  if (!evenlySpaced) {
    return { count: natural, rate: fps, times: Array.from({ length: natural }, (_, i) => i / fps) };
  }
  const rate = maxFrames / durationSec;
  return { count: maxFrames, rate, times: Array.from({ length: maxFrames }, (_, i) => (i * durationSec) / maxFrames) };
}

/** The ffmpeg filter chain for a plan: pick frames, then (optionally) shrink only what was picked. */
export function frameFilter(plan: FramePlan, maxSide?: number): string {
  // A rate with full precision: a rounded rate would drift over a long video.
  const filters = [`fps=fps=${plan.rate.toPrecision(17)}:round=up`];
  if (maxSide !== undefined) {
    if (!Number.isInteger(maxSide) || maxSide < 1) {
      throw new IwrError("MEDIA", `cannot sample frames: maxSide must be a positive integer, got ${maxSide}`);
    }
    filters.push(`scale=w='min(iw,${maxSide})':h='min(ih,${maxSide})':force_original_aspect_ratio=decrease`);
  }
  return filters.join(",");
}

function ffmpegPath(): string {
  const found = findFfmpeg();
  if (!found) throw new IwrError("SETUP_MISSING", "ffmpeg not found: run `npx iwr setup` (or set IWR_FFMPEG)");
  return found.path;
}

async function videoDuration(videoPath: string): Promise<number> {
  const fromHeader = await readMp4DurationSec(videoPath);
  if (fromHeader !== undefined) return fromHeader;
  try {
    return (await probeVideo(videoPath)).durationSec;
  } catch (error) {
    if (error instanceof IwrError && error.code === "MEDIA") throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new IwrError("MEDIA", `cannot read video ${videoPath}: ${reason}`, { file: videoPath }, { cause: error });
  }
}

function runFfmpeg(args: string[], videoPath: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), args, { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
    });
    child.on("error", (error) => reject(new IwrError("MEDIA", `cannot run ffmpeg for ${videoPath}: ${error.message}`, { file: videoPath }, { cause: error })));
    child.on("close", (code, signal) => {
      if (code === 0) return resolve(Buffer.concat(chunks));
      const reason = stderr.trim() || (signal ? `killed by ${signal}` : `exit code ${code}`);
      reject(new IwrError("MEDIA", `ffmpeg cannot read video ${videoPath}: ${reason}`, { file: videoPath }));
    });
  });
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Cut ffmpeg's image2pipe output (PNG files back to back) into single PNGs by walking
 * the chunk structure: 8-byte signature, then length/type/data/CRC chunks up to IEND.
 */
export function splitPngStream(stream: Buffer, source: string): Buffer[] {
  const pngs: Buffer[] = [];
  let start = 0;
  while (start < stream.length) {
    if (stream.length - start < PNG_SIGNATURE.length || !stream.subarray(start, start + 8).equals(PNG_SIGNATURE)) {
      throw new IwrError("MEDIA", `unexpected bytes in ffmpeg's frame stream for ${source} at offset ${start}`, { file: source });
    }
    let cursor = start + PNG_SIGNATURE.length;
    let ended = false;
    while (!ended) {
      if (cursor + 8 > stream.length) throw new IwrError("MEDIA", `truncated frame in ffmpeg's output for ${source}`, { file: source });
      const dataLength = stream.readUInt32BE(cursor);
      ended = stream.toString("latin1", cursor + 4, cursor + 8) === "IEND";
      cursor += 12 + dataLength; // length + type + data + CRC
    }
    if (cursor > stream.length) throw new IwrError("MEDIA", `truncated frame in ffmpeg's output for ${source}`, { file: source });
    pngs.push(stream.subarray(start, cursor));
    start = cursor;
  }
  return pngs;
}

/** Sample frames of a video as PNGs (see the module comment for which frames). */
export async function sampleFrames(videoPath: string, options: SampleFramesOptions = {}): Promise<SampledFrame[]> {
  if (!fs.existsSync(videoPath)) throw new IwrError("MEDIA", `video not found: ${videoPath}`, { file: videoPath });
  const durationSec = options.durationSec ?? (await videoDuration(videoPath));
  const plan = planFrames(durationSec, options.fps ?? PROTOCOL.framesPerSecond, options.maxFrames ?? PROTOCOL.maxVideoFrames, options.count ?? "ceil");
  if (plan.count === 0) return [];
  const started = performance.now();
  const output = await runFfmpeg(
    [
      "-v",
      "error",
      "-nostdin",
      "-i",
      videoPath,
      "-an",
      "-vf",
      frameFilter(plan, options.maxSide),
      "-frames:v",
      String(plan.count),
      "-f",
      "image2pipe",
      "-c:v",
      "png",
      "pipe:1",
    ],
    videoPath,
  );
  const pngs = splitPngStream(output, videoPath);
  if (pngs.length === 0) throw new IwrError("MEDIA", `ffmpeg decoded no frames from video ${videoPath}`, { file: videoPath });
  // Container durations can overstate the stream by a frame: one frame short is sent as it
  // is (not padded with copies). More missing means the video stops decoding before its
  // stated end (truncated or damaged): sampling it would silently describe only its start.
  if (pngs.length < plan.count - MISSING_FRAMES_TOLERATED) {
    const lastTime = plan.times[pngs.length - 1] ?? 0;
    throw new IwrError(
      "MEDIA",
      `video ${videoPath} decodes only to about ${lastTime.toFixed(1)} s of its stated ${durationSec.toFixed(1)} s: ${pngs.length} of ${plan.count} frames ` +
        "(truncated or damaged? `iwr tasks validate` decodes it whole)",
      { file: videoPath, frames: pngs.length, planned: plan.count },
    );
  }
  if (pngs.length < plan.count) log("media").debug(`sampled ${pngs.length} of ${plan.count} planned frames from ${videoPath}`);
  log("media").debug(`sampled ${pngs.length} frames from ${videoPath} in ${Math.round(performance.now() - started)} ms`);
  return pngs.map((png, index) => ({ index, timeSec: plan.times[index] ?? index / plan.rate, png }));
}
