/**
 * The one decoding pass behind video states. ffmpeg writes small grey frames, which the
 * segmenter reads as they come, and every second frame at full size, unconverted
 * (YUV 4:2:0), both into segment files in a private folder (frame-segments.ts,
 * full-frame-files.ts). Each run keeps a thinned handful of full-size samples; when a
 * state's run closes, the one nearest its middle is read, converted to RGB with the
 * stream's matrix and range (yuv-to-rgb.ts) and handed on to be saved while decoding goes
 * on (that reading side is stream-analysis.ts; this file runs ffmpeg and its folders). No probe runs first: the frame sizes, pixel layout and
 * duration come from the headers this very ffmpeg prints on stderr (ffmpeg-log.ts).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { errorMessage, IwrError } from "../errors.ts";
import { tempPathBeside } from "../files/atomic.ts";
import { type FfmpegHeader, FfmpegLog, type FrameSize, type OutputStream } from "./ffmpeg-log.ts";
import { FolderWatch } from "./folder-watch.ts";
import { FrameSegments } from "./frame-segments.ts";
import { FullFrameFiles } from "./full-frame-files.ts";
import { type AnalysedRun, type Sample, type SavedFrame, StreamAnalysis } from "./stream-analysis.ts";
import { VIDEO_STATE_SETTINGS } from "./video-state-settings.ts";
import { yuv420pFrameBytes } from "./yuv-to-rgb.ts";

export type { Sample } from "./stream-analysis.ts";

export interface Analysis {
  runs: AnalysedRun[];
  frames: number;
  /** The size every state's PNG has: the video as shown (ffmpeg turns rotated videos upright). */
  shown: FrameSize;
  /** The grey analysis frames' size. */
  analysis: FrameSize;
  /** As the container states it, or else the decoded frames at the analysis rate. */
  durationSec: number;
}

/**
 * The filter graph, written without the video's size: the grey branch scales to
 * `analysisWidth` at most, the aspect kept (at least one line); the full branch keeps
 * every `fullFrameEvery`-th frame as 8-bit YUV 4:2:0 (no conversion for the usual
 * recording; others are brought to it, and the output header says with which range and
 * matrix). ffmpeg turns rotated videos upright before either. The sizes ffmpeg chose are
 * read off its output headers, so they cannot disagree with the frames.
 */
function filterGraph(): string {
  const settings = VIDEO_STATE_SETTINGS;
  return (
    `fps=${settings.fps},split=2[a][b];` +
    `[a]scale=w='min(${settings.analysisWidth}\\,iw)':h='max(1\\,round(ow*ih/iw))':flags=fast_bilinear,format=gray[grey];` +
    `[b]select='not(mod(n\\,${settings.fullFrameEvery}))',format=yuv420p[full]`
  );
}

/**
 * Seconds of video per segment file. Grey: ten 57 KB frames a file. Full: at 2.5 frames
 * a second, two or three frames (about 3.5 MB at 720p) a file, which is what a kept
 * sample holds on disk while its run lasts.
 */
const GREY_SEGMENT_SEC = 2;
const FULL_SEGMENT_SEC = 1;

/**
 * Grey segments ffmpeg may write before its output headers are read (some 200 s of
 * video): past that they are not coming (an ffmpeg that ignores "level"), and waiting
 * longer would only fill the disk.
 */
const EARLY_SEGMENTS = 100;

/** Grey frames segmented between two turns of the event loop, so that ffmpeg's log and the states' frames keep moving. */
const FRAMES_PER_TURN = 4;

function headlessError(ffmpeg: string, videoPath: string): IwrError {
  return new IwrError(
    "MEDIA",
    `ffmpeg (${ffmpeg}) wrote frames of video ${videoPath} without the output headers it prints first with \`-v level+info\`: ` +
      "this ffmpeg is too old or built differently (run `npx iwr setup`, or set IWR_FFMPEG)",
    { file: videoPath },
  );
}

/** The segment muxer's arguments for one output: raw frames, `seconds` of video per file. */
function segmentOutput(stream: string, seconds: number, pattern: string): string[] {
  return [
    "-map",
    stream,
    "-fps_mode",
    "passthrough",
    "-c:v",
    "rawvideo",
    "-f",
    "segment",
    "-segment_format",
    "rawvideo",
    "-segment_time",
    String(seconds),
    pattern,
  ];
}

/**
 * ffmpeg's arguments for one pass: the video decoded once, its grey frames and full-size
 * samples written as segment files named by the two patterns. Exported for the bench,
 * which times this command on its own against bare decoding.
 */
export function passArguments(videoPath: string, greyPattern: string, fullPattern: string): string[] {
  return [
    "-hide_banner",
    "-nostats",
    "-v",
    "level+info",
    "-nostdin",
    "-y",
    "-i",
    videoPath,
    "-an",
    // One filter thread: for the usual yuv420p recording the filters' work per frame is
    // small (fps, split, a scale to a few hundred pixels across, a select; the format filter
    // passes frames through), and handing slices of it to a thread per core cost more in
    // waking them than it saved: about a twentieth of the pass's time with ffmpeg 5.1 on the
    // bundled recordings. Other pixel formats are converted at full size here, on that one
    // thread, for every second analysis frame.
    "-filter_complex_threads",
    "1",
    "-filter_complex",
    filterGraph(),
    ...segmentOutput("[grey]", GREY_SEGMENT_SEC, greyPattern),
    ...segmentOutput("[full]", FULL_SEGMENT_SEC, fullPattern),
  ];
}

/** The folders one pass writes its frames into: a temp folder in the cache entry, removed at the end. */
class PassFolders {
  readonly root: string;
  readonly grey: string;
  readonly full: string;
  constructor(workDir: string) {
    this.root = tempPathBeside(path.join(workDir, "decoded-frames"));
    this.grey = path.join(this.root, "grey");
    this.full = path.join(this.root, "full");
    fs.mkdirSync(this.grey, { recursive: true });
    fs.mkdirSync(this.full, { recursive: true });
  }
  remove(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Decodes the video once and segments it; `workDir` holds the pass's frame files while it
 * runs. Each state's representative frame is handed to `saveFrame` as soon as its run
 * closes, so encoding it overlaps the decoding of what follows instead of waiting for the end.
 */
export async function analyse(
  ffmpeg: string,
  videoPath: string,
  workDir: string,
  saveFrame: (shown: FrameSize, sample: Sample) => Promise<SavedFrame>,
): Promise<Analysis> {
  const folders = new PassFolders(workDir);
  const grey = new FrameSegments(folders.grey, "grey");
  const files = new FullFrameFiles(folders.full, VIDEO_STATE_SETTINGS.fullFrameEvery);
  const watch = new FolderWatch(folders.grey);
  try {
    const { analysis, durationSec } = await decode(ffmpeg, videoPath, { grey, files, watch }, saveFrame);
    try {
      await analysis.saved();
    } catch (error) {
      throw new IwrError("MEDIA", `cannot save a state's frame of video ${videoPath}: ${errorMessage(error)}`, { file: videoPath }, { cause: error });
    }
    return { runs: analysis.runs, frames: analysis.greyFrames, shown: analysis.shown, analysis: analysis.size, durationSec };
  } finally {
    watch.close();
    grey.remove();
    files.remove();
    folders.remove();
  }
}

interface PassFrames {
  grey: FrameSegments;
  files: FullFrameFiles;
  /** Wakes the reader when ffmpeg writes grey frames. */
  watch: FolderWatch;
}

interface PassOutcome {
  code: number | null;
  /** Why this pass killed ffmpeg, if it did. */
  killedBecause?: "headless" | "layout" | "analysis";
}

async function decode(
  ffmpeg: string,
  videoPath: string,
  { grey, files, watch }: PassFrames,
  saveFrame: (shown: FrameSize, sample: Sample) => Promise<SavedFrame>,
): Promise<{ analysis: StreamAnalysis; durationSec: number }> {
  const child = spawn(ffmpeg, passArguments(videoPath, grey.pattern, files.pattern), { stdio: ["ignore", "ignore", "pipe"] });
  let analysis: StreamAnalysis | undefined;
  /** Each grey frame is read into this one buffer in turn. */
  let greyFrame: Buffer | undefined;
  let layoutProblem: string | undefined;
  let killedBecause: PassOutcome["killedBecause"];
  const log = new FfmpegLog(2, ({ outputs: [greyStream, full] }: FfmpegHeader) => {
    const layout = (full as OutputStream).layout;
    if (layout?.pixelFormat !== "yuv420p") {
      layoutProblem = `its full-size output is ${layout?.pixelFormat ?? "of an unknown pixel format"}, not the yuv420p asked for`;
      killedBecause = "layout";
      child.kill("SIGKILL");
      return;
    }
    grey.setFrameBytes(greyStream!.width * greyStream!.height);
    greyFrame = Buffer.allocUnsafeSlow(greyStream!.width * greyStream!.height);
    files.setFrameBytes(yuv420pFrameBytes(full!));
    analysis = new StreamAnalysis(greyStream!, full!, layout, files, (sample) => saveFrame(full!, sample));
    watch.notify();
  });
  let exitedYet = false;
  const exited = new Promise<PassOutcome>((resolve, reject) => {
    child.on("error", (error) => {
      exitedYet = true;
      watch.notify();
      reject(new IwrError("MEDIA", `cannot run ffmpeg for ${videoPath}: ${error.message}`, { file: videoPath }, { cause: error }));
    });
    // "close" comes after stderr has ended, so the log is complete by then.
    child.on("close", (code) => {
      log.end();
      grey.end();
      exitedYet = true;
      watch.notify();
      resolve({ code, ...(killedBecause ? { killedBecause } : {}) });
    });
  });
  child.stderr?.on("data", (chunk: Buffer) => log.push(chunk));
  // Frames are taken as ffmpeg writes them, while it runs; the last ones once it has exited.
  // What cannot be analysed stops ffmpeg: the rest of its decoding would be wasted.
  let segmentingFailure: unknown;
  const stopForAnalysis = () => {
    killedBecause ??= "analysis";
    child.kill("SIGKILL");
  };
  const segmenting = (async () => {
    let sinceTurn = 0;
    for (;;) {
      if (analysis?.failure) return stopForAnalysis();
      const ended = exitedYet;
      const frame = analysis ? grey.read(analysis.greyFrames, greyFrame) : undefined;
      if (frame) {
        grey.release(analysis!.greyFrames);
        analysis!.push(frame);
        if (++sinceTurn >= FRAMES_PER_TURN) {
          sinceTurn = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
        continue;
      }
      // Nothing more to read, and ffmpeg had already exited when this look began: done.
      if (ended) return;
      if (!analysis && !killedBecause && grey.begun(EARLY_SEGMENTS)) {
        killedBecause = "headless";
        child.kill("SIGKILL");
      }
      files.poll();
      await watch.changed();
    }
  })().then(
    () => undefined,
    // Held as a value at once: a rejection left waiting for ffmpeg to exit would count as unhandled.
    (error: unknown) => {
      segmentingFailure = error;
      stopForAnalysis();
    },
  );
  const outcome = await exited;
  await segmenting;
  const reason = layoutProblem ?? (log.errors.trim() || `exit code ${outcome.code}`);
  const fail = (error: unknown): never => {
    files.ended(reason);
    throw error;
  };
  if (outcome.killedBecause === "headless" || (outcome.code === 0 && !analysis && !layoutProblem && grey.begun(0)))
    return fail(headlessError(ffmpeg, videoPath));
  const failure = segmentingFailure ?? analysis?.failure;
  // ffmpeg failing on its own comes first: what it says (a broken file, a full disk) is the
  // cause, and a frame it left half-written only a consequence.
  if ((outcome.code !== 0 && outcome.killedBecause !== "analysis") || !analysis) {
    return fail(new IwrError("MEDIA", `ffmpeg cannot read video ${videoPath}: ${reason}`, { file: videoPath }, failure ? { cause: failure } : undefined));
  }
  if (failure) return fail(new IwrError("MEDIA", `cannot analyse video ${videoPath}: ${errorMessage(failure)}`, { file: videoPath }, { cause: failure }));
  if (analysis.greyFrames === 0)
    return fail(new IwrError("MEDIA", `ffmpeg decoded no frames from video ${videoPath}${log.errors ? `: ${log.errors}` : ""}`, { file: videoPath }));
  analysis.finish();
  // Every frame ffmpeg will write is written: a run's frame still missing is an error.
  files.ended(reason);
  return { analysis, durationSec: log.header?.durationSec ?? analysis.greyFrames / VIDEO_STATE_SETTINGS.fps };
}
