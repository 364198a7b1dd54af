/**
 * The full-size frames of one video-state pass, as ffmpeg writes them: one raw file per
 * sampled frame in a private temp folder (ffmpeg's image2 muxer, `-atomic_writing`, so a
 * file that exists is complete). Node reads only the few that become a state's frame;
 * piping all of them through Node cost more than ffmpeg's decoding (about 140 MB for a
 * 20 s 720p recording, most of it garbage for the collector). Frames no run can need are
 * deleted as the segmenter decides, so the folder stays a handful of frames whatever the
 * video's length; the folder goes when the pass ends, and a killed pass's folder is a
 * temp that the next pass on this cache entry sweeps (files/atomic.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { tempPathBeside } from "../files/atomic.ts";

interface Wait {
  file: string;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class FullFrameFiles {
  readonly dir: string;
  private readonly doomed = new Set<string>();
  private waits: Wait[] = [];
  private endedBecause: string | undefined;

  /** `beside` names the folder the temp folder is made in (a cache entry's folder). `every`: an analysis frame in `every` is sampled. */
  constructor(beside: string, private readonly every: number) {
    this.dir = tempPathBeside(path.join(beside, "full-frames"));
    fs.mkdirSync(this.dir, { recursive: true });
  }

  /** The file name pattern for ffmpeg (with `-start_number 0`): the n-th sampled frame. */
  get pattern(): string {
    return path.join(this.dir, "%07d.yuv");
  }

  private fileOf(frame: number): string {
    return path.join(this.dir, `${String(frame / this.every).padStart(7, "0")}.yuv`);
  }

  /** The sample of analysis frame `frame` is not needed: deleted now, or as soon as it is written. */
  drop(frame: number): void {
    const file = this.fileOf(frame);
    if (!unlinked(file)) this.doomed.add(file);
  }

  /** Reads the sample of analysis frame `frame` once ffmpeg has written it. */
  async read(frame: number): Promise<Buffer> {
    const file = this.fileOf(frame);
    if (!fs.existsSync(file)) {
      if (this.endedBecause !== undefined) throw missing(file, this.endedBecause);
      await new Promise<void>((resolve, reject) => this.waits.push({ file, resolve, reject }));
    }
    return fs.promises.readFile(file);
  }

  /** Called as ffmpeg makes progress: hands over the files now written, deletes the doomed ones now there. */
  poll(): void {
    if (this.waits.length > 0) {
      const [ready, waiting] = partition(this.waits, (wait) => fs.existsSync(wait.file));
      this.waits = waiting;
      for (const wait of ready) wait.resolve();
    }
    for (const file of this.doomed) if (unlinked(file)) this.doomed.delete(file);
  }

  /** ffmpeg has exited: what it has not written now, it never will. */
  ended(reason: string): void {
    this.endedBecause = reason;
    this.poll();
    for (const wait of this.waits.splice(0)) wait.reject(missing(wait.file, reason));
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function missing(file: string, reason: string): Error {
  return new Error(`ffmpeg wrote no full-size frame ${path.basename(file)} (${reason})`);
}

function unlinked(file: string): boolean {
  try {
    fs.unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}
