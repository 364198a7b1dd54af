/**
 * The full-size frames of one video-state pass, as ffmpeg writes them (unconverted
 * YUV 4:2:0, every `every`-th analysis frame) into segment files (frame-segments.ts).
 * Node reads only the few that become a state's frame; piping all of them through Node
 * cost more than ffmpeg's decoding (about 140 MB for a 20 s 720p recording, most of it
 * garbage for the collector). Frames no run can need are released as the segmenter
 * decides, and a segment goes once all its frames are, so the folder stays a handful of
 * segments whatever the video's length.
 */
import { FrameSegments } from "./frame-segments.ts";

interface Wait {
  index: number;
  into: Buffer | undefined;
  resolve: (frame: Buffer) => void;
  reject: (error: Error) => void;
}

export class FullFrameFiles {
  private readonly segments: FrameSegments;
  private waits: Wait[] = [];
  private endedBecause: string | undefined;

  /** `dir` belongs to this pass. `every`: an analysis frame in `every` is sampled. */
  constructor(
    dir: string,
    private readonly every: number,
  ) {
    this.segments = new FrameSegments(dir, "full");
  }

  /** The file name pattern for ffmpeg's segment muxer. */
  get pattern(): string {
    return this.segments.pattern;
  }

  /** The size of one frame, from ffmpeg's output header. */
  setFrameBytes(bytes: number): void {
    this.segments.setFrameBytes(bytes);
  }

  /** The sample of analysis frame `frame` is not needed. */
  drop(frame: number): void {
    this.segments.release(frame / this.every);
  }

  /** The sample of analysis frame `frame`, once ffmpeg has written it; read into `into` when given (the caller's buffer, of the frame's size). */
  read(frame: number, into?: Buffer): Promise<Buffer> {
    const index = frame / this.every;
    const ready = this.segments.read(index, into);
    if (ready) return Promise.resolve(ready);
    if (this.endedBecause !== undefined) return Promise.reject(missing(index, this.endedBecause));
    return new Promise((resolve, reject) => this.waits.push({ index, into, resolve, reject }));
  }

  /** Called as ffmpeg makes progress: hands over the frames now written. */
  poll(): void {
    if (this.waits.length === 0) return;
    const waiting: Wait[] = [];
    for (const wait of this.waits) {
      let frame: Buffer | undefined;
      try {
        frame = this.segments.read(wait.index, wait.into);
      } catch (error) {
        wait.reject(error as Error);
        continue;
      }
      if (frame) wait.resolve(frame);
      else waiting.push(wait);
    }
    this.waits = waiting;
  }

  /** ffmpeg has exited: what it has not written now, it never will. */
  ended(reason: string): void {
    this.endedBecause = reason;
    this.segments.end();
    this.poll();
    for (const wait of this.waits.splice(0)) wait.reject(missing(wait.index, reason));
  }

  remove(): void {
    this.segments.remove();
  }
}

function missing(index: number, reason: string): Error {
  return new Error(`ffmpeg wrote no full-size frame ${index} (${reason})`);
}
