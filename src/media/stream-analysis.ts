/**
 * The reading side of a video's decoding pass (video-state-pass.ts runs ffmpeg): the grey
 * frames go to the state segmenter as they come, a thinned handful of full-size samples
 * is kept per run, and when a state's run closes the sample nearest its middle is read,
 * converted to RGB and handed on to be saved while decoding goes on.
 */
import { BufferPool } from "./buffer-pool.ts";
import type { FrameSize, PixelLayout } from "./ffmpeg-log.ts";
import type { FullFrameFiles } from "./full-frame-files.ts";
import { SampleFrames } from "./sample-frames.ts";
import { type Run, type SegmentationSettings, StateSegmenter } from "./state-segmentation.ts";
import { VIDEO_STATE_SETTINGS } from "./video-state-settings.ts";
import { yuv420pFrameBytes, yuv420pToRgb } from "./yuv-to-rgb.ts";

export interface Sample {
  frame: number;
  /** RGB, the size of the video as shown; lent until the save's promise settles, then reused. */
  data: Buffer;
}

export interface SavedFrame {
  file: string;
  sha256: string;
}

export interface AnalysedRun {
  run: Run;
  /** The sample shown for the run: a state's, or the first run's while it may be the only one. */
  frame?: number;
  /** The run's representative PNG, saved while decoding goes on: every state's, and the only run's of a video too short to have one. */
  saved?: Promise<SavedFrame>;
}

/** What reads one video's grey stream once the sizes are known, and picks and saves the states' frames. */
export class StreamAnalysis {
  readonly runs: AnalysedRun[] = [];
  greyFrames = 0;
  failure: unknown;
  private readonly segmenter: StateSegmenter;
  private readonly samples: SampleFrames;
  /** A state's full-size frame as read (YUV), and as converted (RGB) until its PNG is made. */
  private readonly yuvFrames: BufferPool;
  private readonly rgbFrames: BufferPool;

  constructor(
    readonly size: FrameSize,
    readonly shown: FrameSize,
    private readonly layout: PixelLayout,
    private readonly files: FullFrameFiles,
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
    this.samples = new SampleFrames((frame) => files.drop(frame));
    this.yuvFrames = new BufferPool(yuv420pFrameBytes(shown));
    this.rgbFrames = new BufferPool(shown.width * shown.height * 3);
  }

  /** The next grey frame, as ffmpeg wrote it (the segmenter keeps a copy of what it needs). */
  push(frame: Buffer): void {
    if (this.failure) return;
    try {
      const index = this.greyFrames++;
      // Its full-size sample is on its way: ffmpeg writes it as it decodes.
      if (index % VIDEO_STATE_SETTINGS.fullFrameEvery === 0) this.samples.add(index);
      this.closed(this.segmenter.push(new Uint8Array(frame.buffer, frame.byteOffset, frame.length)));
      this.files.poll();
    } catch (error) {
      this.failure = error;
    }
  }

  /** The end of the grey stream: the last runs close, and a video too short for a state has its one run's frame saved. */
  finish(): void {
    this.closed(this.segmenter.finish());
    const only = this.runs[0];
    if (this.runs.length === 1 && only && !only.run.isState && only.frame !== undefined) only.saved = this.save(only.frame);
  }

  /** Every frame saved, or the first failure. */
  async saved(): Promise<void> {
    await Promise.all(this.runs.map((entry) => entry.saved));
  }

  private save(frame: number): Promise<SavedFrame> {
    const yuv = this.yuvFrames.take();
    const saved = this.files.read(frame, yuv).then(async () => {
      this.files.drop(frame);
      const rgb = this.rgbFrames.take();
      try {
        yuv420pToRgb(yuv, this.shown, this.layout, rgb);
      } finally {
        this.yuvFrames.give(yuv);
      }
      try {
        return await this.saveFrame({ frame, data: rgb });
      } finally {
        this.rgbFrames.give(rgb);
      }
    });
    // Awaited once decoding ends; until then a failure must not count as unhandled.
    saved.catch(() => undefined);
    return saved;
  }

  private closed(runs: Run[]): void {
    for (const run of runs) {
      const frame = this.samples.take(run);
      // A transition's sample is kept only while it may turn out to be the video's only run.
      const first = this.runs[0];
      if (first && !first.run.isState && this.runs.length === 1 && first.frame !== undefined) this.files.drop(first.frame);
      if (frame !== undefined && run.isState) this.runs.push({ run, frame, saved: this.save(frame) });
      else if (frame !== undefined && this.runs.length === 0) this.runs.push({ run, frame });
      else {
        if (frame !== undefined) this.files.drop(frame);
        this.runs.push({ run });
      }
    }
  }
}
