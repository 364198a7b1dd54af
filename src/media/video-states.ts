/**
 * The stable states of a screen recording (see state-segmentation.ts for what counts as
 * stable): for each, its time span and a representative frame saved as a PNG.
 *
 * One ffmpeg pass decodes the video once at `fps` and hands back two streams: small grey
 * frames for the analysis, and every second frame at full size (raw YUV, the decoder's
 * own format, so nothing is converted that is not kept). A state lasts at least two
 * analysis frames, so it always holds a full-size sample; the one nearest its middle
 * becomes its PNG. Memory stays bounded: a run keeps a thinned handful of samples.
 *
 * Results are cached by the video's content hash and the analysis settings: the frames
 * as content-addressed PNGs (`frames/<sha256>.png`) and `states.json`, under
 * `.cache/video-states/` (or `IWR_STATES_CACHE_DIR`).
 */
import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { IwrError, errorMessage } from "../errors.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { log } from "../log/logger.ts";
import { findFfmpeg } from "../setup/find-tools.ts";
import { probeVideo, type VideoInfo } from "./probe.ts";
import { StateSegmenter, type Run, type SegmentationSettings } from "./state-segmentation.ts";

export const VIDEO_STATE_SETTINGS = Object.freeze({
  /** Bumped whenever the analysis changes what it finds: old cache entries stop matching. */
  version: 1,
  /** The issue asks for at least 5 fps; a caret's half blink (0.5 s) spans 2–3 frames. */
  fps: 5,
  /** Analysis frames are this wide (grey, aspect kept); a 720p screen becomes 320×180. */
  analysisWidth: 320,
  pixelTolerance: 24,
  minRegionPixels: 2,
  /** A pointer or caret is at most this many screen pixels on a side (our cursor dot: 22 px). */
  pointerMaxSideScreenPx: 48,
  persistenceSec: 0.8,
  minStateSec: 0.4,
  /** Full-size samples: every n-th analysis frame (2 → 2.5 fps: every state of 0.4 s holds one). */
  fullFrameEvery: 2,
  /** Full-size samples a run keeps while it lasts (evenly thinned). */
  samplesPerRun: 12,
});

export interface VideoState {
  index: number;
  startSec: number;
  endSec: number;
  /** The moment the representative frame shows. */
  frameSec: number;
  /** Absolute path of the representative PNG (content-addressed). */
  framePath: string;
  frameSha256: string;
}

export interface VideoStates {
  version: number;
  video: { path: string; sha256: string; durationSec: number; width: number; height: number };
  settings: typeof VIDEO_STATE_SETTINGS;
  analysis: { frames: number; width: number; height: number };
  states: VideoState[];
  /** Runs too short to be states (animations, scrolling, a pointer passing). */
  transitions: number;
  /** What a reader of the result should know (no stable state, a one-frame video...). */
  findings: string[];
  /** True when this came from the cache. */
  cached: boolean;
}

export function defaultStatesCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.IWR_STATES_CACHE_DIR || path.join(".cache", "video-states"));
}

async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

interface YuvLayout {
  width: number;
  height: number;
  chromaWidth: number;
  chromaHeight: number;
  bytes: number;
}

function yuvLayout(width: number, height: number): YuvLayout {
  const chromaWidth = Math.ceil(width / 2);
  const chromaHeight = Math.ceil(height / 2);
  return { width, height, chromaWidth, chromaHeight, bytes: width * height + 2 * chromaWidth * chromaHeight };
}

/** YUV 4:2:0 planar → RGB with the stream's matrix (BT.709, else BT.601) and range, in fixed point. */
function yuv420ToRgb(frame: Buffer, layout: YuvLayout, video: VideoInfo): Buffer {
  const bt709 = video.colorSpace === "bt709";
  const full = video.colorRange === "pc";
  const [cr, cgU, cgV, cb] = bt709 ? [1.5748, 0.1873, 0.4681, 1.8556] : [1.402, 0.344136, 0.714136, 1.772];
  const yScale = full ? 1 : 255 / 219;
  const cScale = full ? 1 : 255 / 224;
  const yOffset = full ? 0 : 16;
  // Tables in 1/1024 units, so the per-pixel work is three lookups and adds.
  const lumaTable = new Int32Array(256);
  const redV = new Int32Array(256);
  const greenU = new Int32Array(256);
  const greenV = new Int32Array(256);
  const blueU = new Int32Array(256);
  for (let value = 0; value < 256; value++) {
    const chroma = (value - 128) * cScale;
    lumaTable[value] = Math.round((value - yOffset) * yScale * 1024 + 512);
    redV[value] = Math.round(cr * chroma * 1024);
    greenU[value] = Math.round(cgU * chroma * 1024);
    greenV[value] = Math.round(cgV * chroma * 1024);
    blueU[value] = Math.round(cb * chroma * 1024);
  }
  const { width, height, chromaWidth, chromaHeight } = layout;
  const uPlane = width * height;
  const vPlane = uPlane + chromaWidth * chromaHeight;
  const rgb = new Uint8ClampedArray(width * height * 3);
  for (let y = 0; y < height; y++) {
    const chromaRow = (y >> 1) * chromaWidth;
    let out = y * width * 3;
    for (let x = 0; x < width; x++) {
      const luma = lumaTable[frame[y * width + x]!]!;
      const u = frame[uPlane + chromaRow + (x >> 1)]!;
      const v = frame[vPlane + chromaRow + (x >> 1)]!;
      rgb[out++] = (luma + redV[v]!) >> 10;
      rgb[out++] = (luma - greenU[u]! - greenV[v]!) >> 10;
      rgb[out++] = (luma + blueU[u]!) >> 10;
    }
  }
  return Buffer.from(rgb.buffer, rgb.byteOffset, rgb.byteLength);
}

/** Reads fixed-size frames off a stream as they complete. */
class FrameReader {
  private parts: Buffer[] = [];
  private length = 0;
  constructor(
    private readonly frameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
  ) {}
  push(chunk: Buffer): void {
    this.parts.push(chunk);
    this.length += chunk.length;
    if (this.length < this.frameBytes) return;
    let joined = Buffer.concat(this.parts, this.length);
    while (joined.length >= this.frameBytes) {
      // A copy: the frame outlives the joined buffer.
      this.onFrame(Buffer.from(joined.subarray(0, this.frameBytes)));
      joined = joined.subarray(this.frameBytes);
    }
    this.parts = joined.length > 0 ? [joined] : [];
    this.length = joined.length;
  }
}

interface Sample {
  frame: number;
  data: Buffer;
}

/** Full-size samples of the runs not yet closed, thinned so a long run keeps only a handful. */
class SampleStore {
  private samples: Sample[] = [];
  private runStart = 0;
  add(sample: Sample): void {
    this.samples.push(sample);
    const ofRun = this.samples.filter((entry) => entry.frame >= this.runStart);
    if (ofRun.length > VIDEO_STATE_SETTINGS.samplesPerRun) {
      // Every other one goes, the first stays: still spread over the whole run.
      const drop = new Set(ofRun.filter((_, position) => position % 2 === 1));
      this.samples = this.samples.filter((entry) => !drop.has(entry));
    }
  }
  /** The kept sample of `run` nearest its middle; the run's older samples are released. */
  take(run: Run): Sample | undefined {
    const middle = (run.firstFrame + run.lastFrame) / 2;
    const inRun = this.samples.filter((entry) => entry.frame >= run.firstFrame && entry.frame <= run.lastFrame);
    const best = inRun.reduce<Sample | undefined>((chosen, entry) => (!chosen || Math.abs(entry.frame - middle) < Math.abs(chosen.frame - middle) ? entry : chosen), undefined);
    this.samples = this.samples.filter((entry) => entry.frame > run.lastFrame);
    this.runStart = run.lastFrame + 1;
    return best;
  }
}

interface Analysis {
  runs: Array<{ run: Run; sample?: Sample }>;
  frames: number;
}

function analyse(videoPath: string, video: VideoInfo, analysisWidth: number, analysisHeight: number): Promise<Analysis> {
  const ffmpeg = findFfmpeg();
  if (!ffmpeg) return Promise.reject(new IwrError("SETUP_MISSING", "ffmpeg not found: run `npx iwr setup` (or set IWR_FFMPEG)"));
  const settings = VIDEO_STATE_SETTINGS;
  const segmentation: SegmentationSettings = {
    fps: settings.fps,
    pixelTolerance: settings.pixelTolerance,
    minRegionPixels: settings.minRegionPixels,
    pointerMaxSide: Math.max(2, Math.round((settings.pointerMaxSideScreenPx * analysisWidth) / video.width)),
    persistenceSec: settings.persistenceSec,
    minStateSec: settings.minStateSec,
  };
  const segmenter = new StateSegmenter(analysisWidth, analysisHeight, segmentation);
  const store = new SampleStore();
  const runs: Analysis["runs"] = [];
  const layout = yuvLayout(video.width, video.height);
  let greyFrames = 0;
  let fullFrames = 0;
  // The two pipes are read independently, so a run may close before the full-size samples
  // of its last frames have arrived: it waits here until they have (or the video ended).
  const closing: Run[] = [];
  const finalize = (all: boolean) => {
    while (closing.length > 0) {
      const run = closing[0]!;
      if (!all && fullFrames * settings.fullFrameEvery <= run.lastFrame) return;
      closing.shift();
      const sample = store.take(run);
      // A transition's frame is kept only while it may turn out to be the video's only run.
      const first = runs[0];
      if (first && !first.run.isState && runs.length === 1) delete first.sample;
      runs.push(sample && (run.isState || runs.length === 0) ? { run, sample } : { run });
    }
  };
  const closeRuns = (closed: Run[]) => {
    closing.push(...closed);
    finalize(false);
  };
  const filter =
    `fps=${settings.fps},split=2[a][b];` +
    `[a]scale=${analysisWidth}:${analysisHeight}:flags=fast_bilinear,format=gray[grey];` +
    `[b]select='not(mod(n\\,${settings.fullFrameEvery}))',format=yuv420p[full]`;
  return new Promise((resolve, reject) => {
    const child = spawn(
      ffmpeg.path,
      ["-v", "error", "-nostdin", "-i", videoPath, "-an", "-filter_complex", filter,
        "-map", "[grey]", "-f", "rawvideo", "pipe:1",
        "-map", "[full]", "-fps_mode", "passthrough", "-f", "rawvideo", "pipe:3"],
      { stdio: ["ignore", "pipe", "pipe", "pipe"] },
    );
    let stderr = "";
    let failure: unknown;
    const grey = new FrameReader(analysisWidth * analysisHeight, (frame) => {
      try {
        greyFrames += 1;
        closeRuns(segmenter.push(new Uint8Array(frame.buffer, frame.byteOffset, frame.length)));
      } catch (error) {
        failure = error;
      }
    });
    const full = new FrameReader(layout.bytes, (frame) => {
      store.add({ frame: fullFrames * settings.fullFrameEvery, data: frame });
      fullFrames += 1;
      finalize(false);
    });
    const [, greyPipe, errorPipe, fullPipe] = child.stdio;
    if (!(greyPipe instanceof Readable) || !(errorPipe instanceof Readable) || !(fullPipe instanceof Readable)) {
      child.kill("SIGKILL");
      return reject(new IwrError("MEDIA", `cannot read ffmpeg's output pipes for ${videoPath}`, { file: videoPath }));
    }
    greyPipe.on("data", (chunk: Buffer) => grey.push(chunk));
    fullPipe.on("data", (chunk: Buffer) => full.push(chunk));
    errorPipe.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    });
    child.on("error", (error) => reject(new IwrError("MEDIA", `cannot run ffmpeg for ${videoPath}: ${error.message}`, { file: videoPath })));
    child.on("close", (code) => {
      if (failure) return reject(failure);
      if (code !== 0) return reject(new IwrError("MEDIA", `ffmpeg cannot read video ${videoPath}: ${stderr.trim() || `exit code ${code}`}`, { file: videoPath }));
      if (greyFrames === 0) return reject(new IwrError("MEDIA", `ffmpeg decoded no frames from video ${videoPath}`, { file: videoPath }));
      closing.push(...segmenter.finish());
      finalize(true);
      resolve({ runs, frames: greyFrames });
    });
  });
}

async function writePng(dir: string, rgb: Buffer, width: number, height: number): Promise<{ file: string; sha256: string }> {
  const png = await sharp(rgb, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer();
  const sha256 = createHash("sha256").update(png).digest("hex");
  const file = path.join(dir, "frames", `${sha256}.png`);
  if (!fs.existsSync(file)) await writeFileAtomic(file, png);
  return { file, sha256 };
}

function readCached(file: string, videoPath: string): VideoStates | undefined {
  try {
    const cached = JSON.parse(fs.readFileSync(file, "utf8")) as VideoStates;
    if (cached.version !== VIDEO_STATE_SETTINGS.version || !cached.states.every((state) => fs.existsSync(state.framePath))) return undefined;
    return { ...cached, video: { ...cached.video, path: videoPath }, cached: true };
  } catch {
    return undefined;
  }
}

/**
 * The video's stable states, from the cache when this very video was analysed with
 * these settings before. An unreadable video is an IwrError("MEDIA") naming it; a video
 * with no stable state gives no states and a finding that says so.
 */
export async function videoStates(videoPath: string, options: { cacheDir?: string } = {}): Promise<VideoStates> {
  const started = performance.now();
  let video: VideoInfo;
  try {
    video = await probeVideo(videoPath);
  } catch (error) {
    if (error instanceof IwrError) throw error;
    throw new IwrError("MEDIA", `cannot read video ${videoPath}: ${errorMessage(error)}`, { file: videoPath });
  }
  const sha256 = await fileSha256(videoPath);
  const settingsHash = createHash("sha256").update(JSON.stringify(VIDEO_STATE_SETTINGS)).digest("hex").slice(0, 16);
  const dir = path.join(options.cacheDir ?? defaultStatesCacheDir(), `${sha256}-${settingsHash}`);
  const recordFile = path.join(dir, "states.json");
  const cached = readCached(recordFile, videoPath);
  if (cached) return cached;

  const analysisWidth = Math.min(VIDEO_STATE_SETTINGS.analysisWidth, video.width);
  const analysisHeight = Math.max(1, Math.round((analysisWidth * video.height) / video.width));
  const analysis = await analyse(videoPath, video, analysisWidth, analysisHeight);
  const findings: string[] = [];
  const states: VideoState[] = [];
  for (const { run, sample } of analysis.runs) {
    if (!run.isState || !sample) continue;
    const { file, sha256: frameSha256 } = await writePng(dir, yuv420ToRgb(sample.data, yuvLayout(video.width, video.height), video), video.width, video.height);
    states.push({ index: states.length, startSec: run.startSec, endSec: run.endSec, frameSec: sample.frame / VIDEO_STATE_SETTINGS.fps, framePath: file, frameSha256 });
  }
  const only = analysis.runs[0];
  if (states.length === 0 && analysis.runs.length === 1 && only?.sample) {
    // Too short to hold still for minStateSec: the whole video is its one state, said so.
    const { file, sha256: frameSha256 } = await writePng(dir, yuv420ToRgb(only.sample.data, yuvLayout(video.width, video.height), video), video.width, video.height);
    states.push({ index: 0, startSec: 0, endSec: only.run.endSec, frameSec: only.sample.frame / VIDEO_STATE_SETTINGS.fps, framePath: file, frameSha256 });
    findings.push(`the video is only ${only.run.endSec.toFixed(1)} s (${analysis.frames} analysis frame(s)): it is taken as one state`);
  } else if (states.length === 0) {
    findings.push(`no stable state: the screen never holds still for ${VIDEO_STATE_SETTINGS.minStateSec} s (constant motion, ${analysis.runs.length} changes in ${video.durationSec.toFixed(1)} s)`);
  }
  const record: VideoStates = {
    version: VIDEO_STATE_SETTINGS.version,
    video: { path: videoPath, sha256, durationSec: video.durationSec, width: video.width, height: video.height },
    settings: VIDEO_STATE_SETTINGS,
    analysis: { frames: analysis.frames, width: analysisWidth, height: analysisHeight },
    states,
    transitions: analysis.runs.filter(({ run }) => !run.isState).length,
    findings,
    cached: false,
  };
  await writeFileAtomic(recordFile, `${JSON.stringify(record, null, 2)}\n`);
  log("media").debug(`video states of ${videoPath}: ${states.length} state(s), ${record.transitions} transition(s) in ${Math.round(performance.now() - started)} ms`);
  return record;
}
