/**
 * The one decoding pass behind video states: ffmpeg sends small grey frames, which the
 * segmenter reads, and every second frame at full size in RGB, of which each run keeps a
 * thinned handful; a state's sample nearest its middle is handed on to be saved as soon
 * as its run closes. No probe runs first: the frame sizes and the duration come from the
 * headers this very ffmpeg prints on stderr (ffmpeg-log.ts).
 */
import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { IwrError } from "../errors.ts";
import { FfmpegLog, type FfmpegHeader, type FrameSize } from "./ffmpeg-log.ts";
import { FramePool, FrameReader } from "./raw-frames.ts";
import { StateSegmenter, type Run, type SegmentationSettings } from "./state-segmentation.ts";
import { VIDEO_STATE_SETTINGS } from "./video-state-settings.ts";

export interface Sample {
  frame: number;
  data: Buffer;
}

/**
 * Full-size samples that may lie in frames the segmenter has not decided yet: its
 * look-ahead (persistence) plus a shortest state, in samples, and one for the frame being
 * decided.
 */
const UNDECIDED_SAMPLES =
  Math.ceil(
    (Math.round(VIDEO_STATE_SETTINGS.persistenceSec * VIDEO_STATE_SETTINGS.fps) + Math.round(VIDEO_STATE_SETTINGS.minStateSec * VIDEO_STATE_SETTINGS.fps)) /
      VIDEO_STATE_SETTINGS.fullFrameEvery,
  ) + 1;

/** Full-size samples of the runs not yet closed, thinned so a long run keeps only a handful. */
class SampleStore {
  private samples: Sample[] = [];
  private runStart = 0;
  constructor(private readonly pool: FramePool) {}
  add(sample: Sample): void {
    this.samples.push(sample);
    // The newest samples are never thinned: the segmenter decides frames a look-ahead late,
    // so they may belong to a run it has not opened yet, possibly a short state whose only
    // sample this is.
    const ofRun = this.samples.filter((entry) => entry.frame >= this.runStart).slice(0, -UNDECIDED_SAMPLES);
    if (ofRun.length > VIDEO_STATE_SETTINGS.samplesPerRun) {
      // Every other one goes, the first stays: still spread over the whole run.
      const drop = new Set(ofRun.filter((_, position) => position % 2 === 1));
      this.samples = this.samples.filter((entry) => !drop.has(entry));
      for (const dropped of drop) this.pool.give(dropped.data);
    }
  }
  /** The kept sample of `run` nearest its middle; the run's other samples go back to the pool. */
  take(run: Run): Sample | undefined {
    const middle = (run.firstFrame + run.lastFrame) / 2;
    const inRun = this.samples.filter((entry) => entry.frame >= run.firstFrame && entry.frame <= run.lastFrame);
    const best = inRun.reduce<Sample | undefined>((chosen, entry) => (!chosen || Math.abs(entry.frame - middle) < Math.abs(chosen.frame - middle) ? entry : chosen), undefined);
    for (const entry of this.samples) if (entry.frame <= run.lastFrame && entry !== best) this.pool.give(entry.data);
    this.samples = this.samples.filter((entry) => entry.frame > run.lastFrame);
    this.runStart = run.lastFrame + 1;
    return best;
  }
}

export interface SavedFrame {
  file: string;
  sha256: string;
}

interface AnalysedRun {
  run: Run;
  /** The sample shown for the run: a state's, or the first run's while it may be the only one. */
  frame?: number;
  /** A state's representative PNG, saved while decoding goes on. */
  saved?: Promise<SavedFrame>;
  /** The first run's sample while it is not a state (it may yet be the video's only run). */
  sample?: Sample;
}

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
 * `analysisWidth` at most, the aspect kept (at least one line); the full branch converts
 * to RGB with the matrix and range each frame declares (swscale's default for undeclared
 * ones: BT.601, limited). ffmpeg turns rotated videos upright before either. The sizes
 * ffmpeg chose are read off its output headers, so they cannot disagree with the frames;
 * a partial frame or a count of full frames that does not fit the grey ones is still
 * checked, and is an error, never frames read out of step.
 */
function filterGraph(): string {
  const settings = VIDEO_STATE_SETTINGS;
  return (
    `fps=${settings.fps},split=2[a][b];` +
    `[a]scale=w='min(${settings.analysisWidth}\\,iw)':h='max(1\\,round(ow*ih/iw))':flags=fast_bilinear,format=gray[grey];` +
    `[b]select='not(mod(n\\,${settings.fullFrameEvery}))',scale=in_color_matrix=auto:in_range=auto,format=rgb24[full]`
  );
}

/** What reads one video's two streams once its size is known. */
class StreamAnalysis {
  readonly grey: FrameReader;
  readonly full: FrameReader;
  readonly runs: AnalysedRun[] = [];
  greyFrames = 0;
  fullFrames = 0;
  failure: unknown;
  private readonly segmenter: StateSegmenter;
  private readonly pool: FramePool;
  private readonly store: SampleStore;
  // The two pipes are read independently, so a run may close before the full-size samples
  // of its last frames have arrived: it waits here until they have (or the video ended).
  private readonly closing: Run[] = [];

  constructor(
    readonly size: FrameSize,
    readonly shown: FrameSize,
    private readonly saveFrame: (sample: Sample) => Promise<SavedFrame>,
  ) {
    const settings = VIDEO_STATE_SETTINGS;
    const segmentation: SegmentationSettings = {
      fps: settings.fps,
      pixelTolerance: settings.pixelTolerance,
      minRegionPixels: settings.minRegionPixels,
      pointerMaxSide: Math.max(2, Math.round((settings.pointerMaxSideScreenPx * size.width) / shown.width)),
      persistenceSec: settings.persistenceSec,
      minStateSec: settings.minStateSec,
    };
    this.segmenter = new StateSegmenter(size.width, size.height, segmentation);
    this.pool = new FramePool(shown.width * shown.height * 3, 2 * VIDEO_STATE_SETTINGS.samplesPerRun);
    this.store = new SampleStore(this.pool);
    this.grey = new FrameReader(size.width * size.height, (frame) => {
      try {
        this.greyFrames += 1;
        this.closing.push(...this.segmenter.push(new Uint8Array(frame.buffer, frame.byteOffset, frame.length)));
        this.finalize(false);
      } catch (error) {
        this.failure = error;
      }
    });
    this.full = new FrameReader(
      this.pool.frameBytes,
      (frame) => {
        this.store.add({ frame: this.fullFrames * settings.fullFrameEvery, data: frame });
        this.fullFrames += 1;
        this.finalize(false);
      },
      this.pool,
    );
  }

  /** The end of both streams: the last runs close. */
  finish(): void {
    this.closing.push(...this.segmenter.finish());
    this.finalize(true);
  }

  private finalize(all: boolean): void {
    const { fullFrameEvery } = VIDEO_STATE_SETTINGS;
    while (this.closing.length > 0) {
      const run = this.closing[0]!;
      if (!all && this.fullFrames * fullFrameEvery <= run.lastFrame) return;
      this.closing.shift();
      const sample = this.store.take(run);
      // A transition's frame is kept only while it may turn out to be the video's only run.
      const first = this.runs[0];
      if (first && !first.run.isState && this.runs.length === 1) delete first.sample;
      if (sample && run.isState) {
        const saved = this.saveFrame(sample);
        // Awaited once decoding ends; until then a failure must not count as unhandled.
        saved.then(() => this.pool.give(sample.data), () => undefined);
        this.runs.push({ run, frame: sample.frame, saved });
      } else this.runs.push(sample && this.runs.length === 0 ? { run, frame: sample.frame, sample } : { run });
    }
  }
}

/** What the pipes may bring before ffmpeg's headers are read: a few full-size 4K frames. */
const EARLY_BYTES = 64 * 1024 * 1024;

/**
 * Decodes the video once and segments it. The frames ffmpeg sends before its output
 * headers have been read wait in memory (up to EARLY_BYTES, past which it is an error). Each
 * state's representative frame is handed to `saveFrame` as soon as its run closes, so
 * encoding it overlaps the decoding of what follows instead of waiting for the end.
 */
export function analyse(ffmpeg: string, videoPath: string, saveFrame: (shown: FrameSize, sample: Sample) => Promise<SavedFrame>): Promise<Analysis> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      ffmpeg,
      ["-hide_banner", "-nostats", "-v", "level+info", "-nostdin", "-i", videoPath, "-an", "-filter_complex", filterGraph(),
        "-map", "[grey]", "-f", "rawvideo", "pipe:1",
        "-map", "[full]", "-fps_mode", "passthrough", "-f", "rawvideo", "pipe:3"],
      { stdio: ["ignore", "pipe", "pipe", "pipe"] },
    );
    const [, greyPipe, errorPipe, fullPipe] = child.stdio;
    if (!(greyPipe instanceof Readable) || !(errorPipe instanceof Readable) || !(fullPipe instanceof Readable)) {
      child.kill("SIGKILL");
      return reject(new IwrError("MEDIA", `cannot read ffmpeg's output pipes for ${videoPath}`, { file: videoPath }));
    }
    let analysis: StreamAnalysis | undefined;
    const early = { grey: [] as Buffer[], full: [] as Buffer[], bytes: 0 };
    // ffmpeg prints its output headers before it writes frames, but whether it can write the
    // second output's header while the first output's pipe is full depends on its version
    // (5.x initialises every output first; later ones run a thread per output). Reading on
    // rules out a stall; past EARLY_BYTES the headers are not coming (an ffmpeg that
    // ignores "level"), and waiting longer would only hold the whole video in memory.
    let headless = false;
    const hold = (queue: Buffer[], chunk: Buffer) => {
      queue.push(chunk);
      early.bytes += chunk.length;
      if (early.bytes > EARLY_BYTES && !headless) {
        headless = true;
        child.kill("SIGKILL");
      }
    };
    const log = new FfmpegLog(2, ({ outputs: [grey, full] }: FfmpegHeader) => {
      analysis = new StreamAnalysis(grey!, full!, (sample) => saveFrame(full!, sample));
      for (const chunk of early.grey.splice(0)) analysis.grey.push(chunk);
      for (const chunk of early.full.splice(0)) analysis.full.push(chunk);
    });
    // Until the headers are read, what comes waits.
    greyPipe.on("data", (chunk: Buffer) => (analysis ? analysis.grey.push(chunk) : hold(early.grey, chunk)));
    fullPipe.on("data", (chunk: Buffer) => (analysis ? analysis.full.push(chunk) : hold(early.full, chunk)));
    errorPipe.on("data", (chunk: Buffer) => log.push(chunk));
    // "close" comes after every pipe has ended, so the log is complete by then.
    errorPipe.on("end", () => log.end());
    child.on("error", (error) => reject(new IwrError("MEDIA", `cannot run ffmpeg for ${videoPath}: ${error.message}`, { file: videoPath })));
    child.on("close", (code) => {
      if (headless) return reject(new IwrError("MEDIA", `ffmpeg (${ffmpeg}) sent ${EARLY_BYTES >> 20} MB of frames of video ${videoPath} without the output headers it prints first with \`-v level+info\`: this ffmpeg is too old or built differently (run \`npx iwr setup\`, or set IWR_FFMPEG)`, { file: videoPath }));
      const reason = log.errors.trim() || `exit code ${code}`;
      if (code !== 0 || !analysis) return reject(new IwrError("MEDIA", `ffmpeg cannot read video ${videoPath}: ${reason}`, { file: videoPath }));
      if (analysis.failure) return reject(analysis.failure);
      const fullExpected = Math.ceil(analysis.greyFrames / VIDEO_STATE_SETTINGS.fullFrameEvery);
      if (analysis.grey.partial || analysis.full.partial || analysis.fullFrames !== fullExpected) {
        return reject(new IwrError("MEDIA", `ffmpeg's frames of video ${videoPath} do not have the size its headers give (${analysis.grey.partial + analysis.full.partial} bytes of a partial frame left, ${analysis.fullFrames} full-size frames for ${analysis.greyFrames} analysis frames)`, { file: videoPath }));
      }
      if (analysis.greyFrames === 0) return reject(new IwrError("MEDIA", `ffmpeg decoded no frames from video ${videoPath}${log.errors ? `: ${log.errors}` : ""}`, { file: videoPath }));
      analysis.finish();
      const durationSec = log.header?.durationSec ?? analysis.greyFrames / VIDEO_STATE_SETTINGS.fps;
      resolve({ runs: analysis.runs, frames: analysis.greyFrames, shown: analysis.shown, analysis: analysis.size, durationSec });
    });
  });
}
