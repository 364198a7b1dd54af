/**
 * Which full-size samples a video-state pass keeps while the segmenter decides: those of
 * the runs not yet closed, thinned so that a long run keeps only a handful, and, when a
 * run closes, the one nearest its middle.
 */
import type { Run } from "./state-segmentation.ts";
import { VIDEO_STATE_SETTINGS } from "./video-state-settings.ts";

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

/** The sampled frames (by analysis frame number) of the runs not yet closed, thinned so a long run keeps only a handful. */
export class SampleFrames {
  private frames: number[] = [];
  private runStart = 0;
  constructor(private readonly drop: (frame: number) => void) {}
  add(frame: number): void {
    this.frames.push(frame);
    // The newest samples are never thinned: the segmenter decides frames a look-ahead late,
    // so they may belong to a run it has not opened yet, possibly a short state whose only
    // sample this is.
    const ofRun = this.frames.filter((entry) => entry >= this.runStart).slice(0, -UNDECIDED_SAMPLES);
    if (ofRun.length > VIDEO_STATE_SETTINGS.samplesPerRun) {
      // Every other one goes, the first stays: still spread over the whole run.
      const dropped = new Set(ofRun.filter((_, position) => position % 2 === 1));
      this.frames = this.frames.filter((entry) => !dropped.has(entry));
      for (const frame of dropped) this.drop(frame);
    }
  }
  /** The kept sample of `run` nearest its middle; the run's other samples are dropped. */
  take(run: Run): number | undefined {
    const middle = (run.firstFrame + run.lastFrame) / 2;
    const inRun = this.frames.filter((entry) => entry >= run.firstFrame && entry <= run.lastFrame);
    const best = inRun.reduce<number | undefined>(
      (chosen, entry) => (chosen === undefined || Math.abs(entry - middle) < Math.abs(chosen - middle) ? entry : chosen),
      undefined,
    );
    for (const entry of this.frames) if (entry <= run.lastFrame && entry !== best) this.drop(entry);
    this.frames = this.frames.filter((entry) => entry > run.lastFrame);
    this.runStart = run.lastFrame + 1;
    return best;
  }
}
