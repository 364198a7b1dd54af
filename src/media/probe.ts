/**
 * What a video file is: duration, size, frame rate, codec. ffprobe's JSON when it is
 * available; otherwise the header that `ffmpeg -i` prints, because the ffmpeg build
 * shipped through npm comes without ffprobe.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import sharp from "sharp";
import { IwrError } from "../errors.ts";
import { findFfmpeg, findFfprobe } from "../setup/find-tools.ts";
import { durationOf, frameSizeOf, splitTopLevel } from "./ffmpeg-header-fields.ts";

const run = promisify(execFile);

export interface VideoInfo {
  durationSec: number;
  width: number;
  height: number;
  fps: number;
  /** Frames in the stream, when the container states it (mp4 does, webm often not). */
  frameCount?: number;
  codec: string;
  pixFmt?: string;
  /** YUV matrix as ffmpeg names it (bt709, bt470bg, smpte170m, ...), when the stream says. */
  colorSpace?: string;
  /** "tv" (limited, 16–235) or "pc" (full), when the stream says. */
  colorRange?: string;
  /** Degrees the player turns the picture (the display matrix), when not 0. width/height are as stored. */
  rotation?: number;
}

export interface ProbeOptions {
  /** ffprobe to use; `null` forces the `ffmpeg -i` fallback. Default: findFfprobe(). */
  ffprobePath?: string | null;
  /** ffmpeg for the fallback. Default: findFfmpeg(). */
  ffmpegPath?: string;
}

/** A probe of a small header should take well under a second; this only stops a hang. */
const PROBE_TIMEOUT_MS = 30_000;

function unreadable(file: string, reason: string): IwrError {
  return new IwrError("MEDIA", `${file}: ffprobe could not read it: ${reason}`, { file });
}

/** ffmpeg's error lines, without "[demuxer @ 0x...]" tags and the repeated file name. */
function reasonFrom(stderr: string, file: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.replace(/^\[[^\]]*@ 0x[0-9a-f]+\]\s*/i, "").trim())
    .map((line) => (line.startsWith(`${file}: `) ? line.slice(file.length + 2) : line))
    .filter((line) => line !== "" && !/^At least one output file must be specified/.test(line));
  return [...new Set(lines)].join("; ") || "no reason given";
}

function parseRate(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const [numerator, denominator] = text.split("/").map(Number);
  if (numerator === undefined || !Number.isFinite(numerator)) return undefined;
  const rate = denominator === undefined ? numerator : numerator / denominator;
  return Number.isFinite(rate) && rate > 0 ? rate : undefined;
}

function positiveNumber(text: string | number | undefined): number | undefined {
  const value = Number(text);
  return text !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

interface FfprobeJson {
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    pix_fmt?: string;
    color_space?: string;
    color_range?: string;
    avg_frame_rate?: string;
    r_frame_rate?: string;
    duration?: string;
    nb_frames?: string;
    side_data_list?: { rotation?: number }[];
  }[];
  format?: { duration?: string };
}

function commandFailure(error: unknown): { stderr: string; message: string } {
  const failed = error as { stderr?: string; message?: string; killed?: boolean };
  const message = failed.killed ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s` : (failed.message ?? String(error));
  return { stderr: failed.stderr ?? "", message };
}

async function probeWithFfprobe(file: string, ffprobe: string): Promise<VideoInfo> {
  let stdout: string;
  try {
    ({ stdout } = await run(ffprobe, ["-v", "error", "-print_format", "json", "-show_streams", "-show_format", file], {
      timeout: PROBE_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (error) {
    const failure = commandFailure(error);
    throw unreadable(file, failure.stderr ? reasonFrom(failure.stderr, file) : failure.message);
  }
  const info = JSON.parse(stdout) as FfprobeJson;
  const video = info.streams?.find((stream) => stream.codec_type === "video");
  if (!video) throw unreadable(file, "it holds no video stream");
  const fps = parseRate(video.avg_frame_rate) ?? parseRate(video.r_frame_rate);
  const frameCount = positiveNumber(video.nb_frames);
  const durationSec = positiveNumber(info.format?.duration) ?? positiveNumber(video.duration) ?? (frameCount && fps ? frameCount / fps : undefined);
  if (!video.width || !video.height) throw unreadable(file, "the video stream has no frame size");
  if (!fps) throw unreadable(file, "the video stream has no frame rate");
  if (!durationSec) throw unreadable(file, "the video has no duration");
  return {
    durationSec,
    width: video.width,
    height: video.height,
    fps,
    ...(frameCount ? { frameCount } : {}),
    codec: video.codec_name ?? "unknown",
    ...(video.pix_fmt ? { pixFmt: video.pix_fmt } : {}),
    ...(video.color_space && video.color_space !== "unknown" ? { colorSpace: video.color_space } : {}),
    ...(video.color_range && video.color_range !== "unknown" ? { colorRange: video.color_range } : {}),
    ...rotationOf(video.side_data_list),
  };
}

function rotationOf(sideData: { rotation?: number }[] | undefined): { rotation?: number } {
  const rotation = sideData?.find((entry) => typeof entry.rotation === "number")?.rotation;
  return rotation ? { rotation } : {};
}

/**
 * Reads the input header `ffmpeg -i <file>` prints on stderr:
 *   Duration: 00:00:02.00, start: 0.000000, bitrate: 33 kb/s
 *   Stream #0:0(und): Video: h264 (High) (avc1 / 0x31637661), yuv420p, 320x180 [SAR 1:1 DAR 16:9], 29 kb/s, 5 fps, 5 tbr, ...
 * Returns undefined when there is no video stream line.
 */
export function parseFfmpegHeader(stderr: string): Omit<VideoInfo, "frameCount"> | undefined {
  const streamLine = /Stream #\d+:\d+.*?: Video: (.*)$/m.exec(stderr)?.[1];
  if (!streamLine) return undefined;
  const parts = splitTopLevel(streamLine);
  const codec = /^[\w-]+/.exec(parts[0] ?? "")?.[0] ?? "unknown";
  const pixFmt = /^([a-z0-9_]+)(\(|$)/.exec(parts[1] ?? "")?.[1];
  // "yuv420p(tv, bt470bg/unknown/unknown)" or "yuv420p(tv, bt709)": range, then the matrix.
  const colour = /\((tv|pc)(?:, ([a-z0-9]+))?/.exec(parts[1] ?? "");
  const size = frameSizeOf(parts);
  const fpsText = parts.map((part) => /^([\d.]+k?) (fps|tbr)$/.exec(part)).find((match) => match)?.[1];
  const fps = fpsText ? (fpsText.endsWith("k") ? Number(fpsText.slice(0, -1)) * 1000 : Number(fpsText)) : NaN;
  const durationSec = durationOf(stderr);
  if (!size || !Number.isFinite(fps) || durationSec === undefined) return undefined;
  return {
    durationSec,
    width: size.width,
    height: size.height,
    fps,
    codec,
    ...(pixFmt ? { pixFmt } : {}),
    ...(colour?.[2] ? { colorSpace: colour[2] } : {}),
    ...(colour?.[1] ? { colorRange: colour[1] } : {}),
  };
}

async function probeWithFfmpeg(file: string, ffmpeg: string): Promise<VideoInfo> {
  let stderr = "";
  try {
    // With no output file ffmpeg always exits 1; the header is on stderr either way.
    await run(ffmpeg, ["-hide_banner", "-i", file], { timeout: PROBE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failure = commandFailure(error);
    if (!failure.stderr) throw unreadable(file, failure.message);
    stderr = failure.stderr;
  }
  const info = parseFfmpegHeader(stderr);
  if (!info) {
    const errors = stderr
      .split(/\r?\n/)
      .filter((line) => !/^\s/.test(line) && !/^Input #/.test(line))
      .join("\n");
    throw unreadable(file, reasonFrom(errors, file));
  }
  return info;
}

export async function probeVideo(file: string, options: ProbeOptions = {}): Promise<VideoInfo> {
  const ffprobe = options.ffprobePath === undefined ? findFfprobe() : options.ffprobePath;
  if (ffprobe) return probeWithFfprobe(file, ffprobe);
  const ffmpeg = options.ffmpegPath ?? findFfmpeg()?.path;
  if (!ffmpeg) throw new IwrError("SETUP_MISSING", `cannot probe ${file}: neither ffprobe nor ffmpeg was found (run \`npx iwr setup\`)`);
  return probeWithFfmpeg(file, ffmpeg);
}

export interface ImageInfo {
  width: number;
  height: number;
  format: string;
}

/** Reads only an image's header (no decode), so checking many PNGs stays cheap. */
export async function probeImage(file: string): Promise<ImageInfo> {
  try {
    const { width, height, format } = await sharp(file).metadata();
    if (!width || !height || !format) throw new Error("no size or format in its header");
    return { width, height, format };
  } catch (error) {
    throw new IwrError("MEDIA", `${file}: not a readable image: ${error instanceof Error ? error.message : String(error)}`, { file });
  }
}
