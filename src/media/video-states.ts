/**
 * The stable states of a screen recording (see state-segmentation.ts for what counts as
 * stable): for each, its time span and a representative frame saved as a PNG.
 *
 * One ffmpeg pass (video-state-pass.ts), with no probe before it, decodes the video once
 * at `fps`: small grey frames for the analysis, and every second frame at full size,
 * unconverted, both written to a temp folder in the cache entry as ffmpeg decodes. A state lasts at
 * least two analysis frames, so it always holds a full-size sample; the one nearest its
 * middle is converted to RGB and becomes its PNG, encoded while decoding goes on. Only
 * those few frames ever reach Node, and the folder holds a thinned handful per run.
 *
 * Results are cached by the video's content hash and the analysis settings: the frames
 * as content-addressed PNGs (`frames/<sha256>.png`) and `states.json`, under
 * `.cache/video-states/` (or `IWR_STATES_CACHE_DIR`).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { z } from "zod";
import { errorMessage, IwrError } from "../errors.ts";
import { sweepAbandonedTemps, writeFileAtomic } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";
import { moveAside, readVerifiedJson } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { findFfmpeg } from "../setup/find-tools.ts";
import type { FrameSize } from "./ffmpeg-log.ts";
import { analyse, type Sample } from "./video-state-pass.ts";
import { VIDEO_STATE_SETTINGS } from "./video-state-settings.ts";

export { VIDEO_STATE_SETTINGS };

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
  /** width × height as shown (a rotated video's stored size turned), the size of every state's PNG. */
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

async function writePng(dir: string, rgb: Buffer, width: number, height: number): Promise<{ file: string; sha256: string }> {
  const png = await sharp(rgb, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1, adaptiveFiltering: false })
    .toBuffer();
  const sha256 = sha256Hex(png);
  const file = path.join(dir, "frames", `${sha256}.png`);
  if (!fs.existsSync(file)) await writeFileAtomic(file, png);
  return { file, sha256 };
}

/** What states.json must hold to be used (the fields a reader relies on). */
const CachedStatesSchema = z.looseObject({
  version: z.literal(VIDEO_STATE_SETTINGS.version),
  video: z.looseObject({ sha256: z.string(), durationSec: z.number(), width: z.number().int().positive(), height: z.number().int().positive() }),
  states: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      startSec: z.number(),
      endSec: z.number(),
      frameSec: z.number(),
      framePath: z.string().min(1),
      frameSha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
  transitions: z.number().int().nonnegative(),
  findings: z.array(z.string()),
});

/** Why a state's frame cannot be used (missing, other bytes than recorded, not a decodable image), or undefined when it can. */
async function frameProblem(state: VideoState): Promise<string | undefined> {
  let png: Buffer;
  try {
    png = await fs.promises.readFile(state.framePath);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : `unreadable (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`;
  }
  if (sha256Hex(png) !== state.frameSha256) return `its bytes are not those recorded (${png.length} bytes)`;
  try {
    await sharp(png).raw().toBuffer();
  } catch (error) {
    return `not a decodable image (${errorMessage(error)})`;
  }
  return undefined;
}

/**
 * The cached states, verified: states.json parses and has the record's shape, and every
 * state's frame is there with the bytes recorded and decodes. A damaged states.json or
 * frame is moved aside with a warning naming it, and the states are computed again.
 */
async function readCached(file: string, videoPath: string): Promise<VideoStates | undefined> {
  const read = readVerifiedJson(file, CachedStatesSchema);
  if (read.status === "missing") return undefined;
  if (read.status === "corrupt") {
    moveAside(file, read.reason, "the video's states are computed again");
    return undefined;
  }
  const cached = read.value as unknown as VideoStates;
  for (const state of cached.states) {
    const problem = await frameProblem(state);
    if (problem === undefined) continue;
    // A frame written by a killed pass is simply missing: computed again without a warning.
    if (problem !== "missing") moveAside(state.framePath, `the frame of state ${state.index}: ${problem}`, "the video's states are computed again");
    return undefined;
  }
  return { ...cached, video: { ...cached.video, path: videoPath }, cached: true };
}

/**
 * The video's stable states, from the cache when this very video was analysed with
 * these settings before. An unreadable video is an IwrError("MEDIA") naming it; a video
 * with no stable state gives no states and a finding that says so.
 */
export async function videoStates(videoPath: string, options: { cacheDir?: string } = {}): Promise<VideoStates> {
  const started = performance.now();
  // The cache is keyed by content alone, so a hit needs no probe.
  let sha256: string;
  try {
    sha256 = await fileSha256(videoPath);
  } catch (error) {
    throw new IwrError("MEDIA", `cannot read video ${videoPath}: ${errorMessage(error)}`, { file: videoPath });
  }
  const settingsHash = sha256Hex(JSON.stringify(VIDEO_STATE_SETTINGS)).slice(0, 16);
  const dir = path.join(options.cacheDir ?? defaultStatesCacheDir(), `${sha256}-${settingsHash}`);
  const recordFile = path.join(dir, "states.json");
  const cached = await readCached(recordFile, videoPath);
  if (cached) return cached;

  const ffmpeg = findFfmpeg();
  if (!ffmpeg) throw new IwrError("SETUP_MISSING", "ffmpeg not found: run `npx iwr setup` (or set IWR_FFMPEG)");
  const saveFrame = (shown: FrameSize, sample: Sample) => writePng(dir, sample.data, shown.width, shown.height);
  // A killed pass leaves its frames' temp folder here.
  sweepAbandonedTemps(dir);
  const analysis = await analyse(ffmpeg.path, videoPath, dir, saveFrame);
  const findings: string[] = [];
  const states: VideoState[] = [];
  for (const { run, frame, saved } of analysis.runs) {
    if (!run.isState || !saved || frame === undefined) continue;
    const { file, sha256: frameSha256 } = await saved;
    states.push({ index: states.length, startSec: run.startSec, endSec: run.endSec, frameSec: frame / VIDEO_STATE_SETTINGS.fps, framePath: file, frameSha256 });
  }
  const only = analysis.runs[0];
  if (states.length === 0 && analysis.runs.length === 1 && only?.saved && only.frame !== undefined) {
    // Too short to hold still for minStateSec: the whole video is its one state, said so.
    const { file, sha256: frameSha256 } = await only.saved;
    states.push({ index: 0, startSec: 0, endSec: only.run.endSec, frameSec: only.frame / VIDEO_STATE_SETTINGS.fps, framePath: file, frameSha256 });
    findings.push(`the video is only ${only.run.endSec.toFixed(1)} s (${analysis.frames} analysis frame(s)): it is taken as one state`);
  } else if (states.length === 0) {
    findings.push(
      `no stable state: the screen never holds still for ${VIDEO_STATE_SETTINGS.minStateSec} s ` +
        `(constant motion, ${analysis.runs.length} changes in ${analysis.durationSec.toFixed(1)} s)`,
    );
  }
  const record: VideoStates = {
    version: VIDEO_STATE_SETTINGS.version,
    video: { path: videoPath, sha256, durationSec: analysis.durationSec, ...analysis.shown },
    settings: VIDEO_STATE_SETTINGS,
    analysis: { frames: analysis.frames, ...analysis.analysis },
    states,
    transitions: analysis.runs.filter(({ run }) => !run.isState).length,
    findings,
    cached: false,
  };
  await writeFileAtomic(recordFile, `${JSON.stringify(record, null, 2)}\n`);
  log("media").debug(
    `video states of ${videoPath}: ${states.length} state(s), ${record.transitions} transition(s) in ${Math.round(performance.now() - started)} ms`,
  );
  return record;
}
