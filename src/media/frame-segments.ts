/**
 * Fixed-size raw frames that ffmpeg writes, as it decodes, into numbered segment files
 * (its segment muxer around rawvideo: a few seconds of frames per file), read here while
 * it runs. The video-state pass writes both of its streams this way.
 *
 * Why segments: a pipe holds 64 KiB, about one small grey frame, so ffmpeg stopped at
 * every frame until Node had read the one before, and each millisecond Node spent on a
 * frame was added to the decoding; one file per frame cost ffmpeg and Node a file's
 * creation and deletion each time (ffmpeg alone ran about 1.5 times as long); one file for
 * the whole video would grow with the video. A segment is deleted as soon as every frame
 * in it is released, so the folder holds what Node still needs.
 *
 * Which frames a segment holds is read off the files themselves, not computed from
 * timestamps: a segment is complete once the next one exists (ffmpeg closes a segment
 * before it opens the next) or once ffmpeg has exited, and then holds size / frame size
 * frames. Within the segment being written, a frame is readable once the file is long
 * enough to hold it: ffmpeg only appends.
 */
import fs from "node:fs";
import path from "node:path";

interface Segment {
  number: number;
  /** Index of the first frame it holds. */
  firstFrame: number;
  /** Frames it holds, once complete. */
  frames?: number;
  fd?: number;
  deleted: boolean;
}

export class FrameSegments {
  private frameBytes: number | undefined;
  private readonly segments: Segment[] = [{ number: 0, firstFrame: 0, deleted: false }];
  private readonly released = new Set<number>();
  /** Segments before this one are all deleted. */
  private oldestLive = 0;
  private finished = false;

  /** `dir` exists and belongs to this pass; `name` prefixes the segment files. */
  constructor(
    readonly dir: string,
    private readonly name: string,
  ) {}

  /** The file name pattern for ffmpeg's segment muxer (numbered from 0); a "%" in the folder's path is escaped. */
  get pattern(): string {
    return path.join(this.dir.replaceAll("%", "%%"), `${this.name}-%06d.raw`);
  }

  /** The frame size, from ffmpeg's output header; nothing can be read before it is known. */
  setFrameBytes(bytes: number): void {
    this.frameBytes = bytes;
  }

  /** ffmpeg has exited: the last segment is complete. */
  end(): void {
    this.finished = true;
  }

  /**
   * Frame `index` if ffmpeg has written all of it, else undefined. It is read into `into`
   * when given (a buffer of at least the frame's size, reused by the caller), else into a
   * new buffer. Throws when the segments do not hold whole frames.
   */
  read(index: number, into?: Buffer): Buffer | undefined {
    const frameBytes = this.frameBytes;
    if (frameBytes === undefined) return undefined;
    if (into && into.length < frameBytes) throw new Error(`a ${into.length}-byte buffer cannot hold a ${frameBytes}-byte frame`);
    const segment = this.segmentOf(index, frameBytes);
    if (!segment || segment.deleted) return undefined;
    const offset = (index - segment.firstFrame) * frameBytes;
    segment.fd ??= openIfThere(this.fileOf(segment));
    if (segment.fd === undefined || fs.fstatSync(segment.fd).size < offset + frameBytes) return undefined;
    const frame = into ? into.subarray(0, frameBytes) : Buffer.allocUnsafe(frameBytes);
    let filled = 0;
    while (filled < frameBytes) {
      const got = fs.readSync(segment.fd, frame, filled, frameBytes - filled, offset + filled);
      if (got === 0) throw new Error(`${this.fileOf(segment)} ended inside frame ${index}`);
      filled += got;
    }
    return frame;
  }

  /**
   * Frame `index` will not be read again (a frame not written yet may be released ahead).
   * Its segment goes as soon as it is complete and all its frames are released, read or not.
   */
  release(index: number): void {
    this.released.add(index);
    if (this.frameBytes !== undefined) this.completeWritten(this.frameBytes);
    this.deleteSpent();
  }

  /** Whether ffmpeg has begun segment file `number` (the frame size need not be known). */
  begun(number: number): boolean {
    return fs.existsSync(this.fileOf({ number }));
  }

  /** Closes and deletes every segment. */
  remove(): void {
    for (const segment of this.segments) this.delete(segment);
  }

  /** The segment that holds or will hold frame `index`, or undefined if ffmpeg has exited without writing it. */
  private segmentOf(index: number, frameBytes: number): Segment | undefined {
    this.completeWritten(frameBytes);
    const last = this.segments[this.segments.length - 1]!;
    if (index < last.firstFrame) return this.segments.findLast((segment) => segment.firstFrame <= index);
    // The segment being written, or the last one, complete.
    return last.frames === undefined || index < last.firstFrame + last.frames ? last : undefined;
  }

  /** Completes every segment the files say is complete: its successor has begun, or ffmpeg has exited. */
  private completeWritten(frameBytes: number): void {
    for (;;) {
      const last = this.segments[this.segments.length - 1]!;
      const nextExists = fs.existsSync(this.fileOf({ number: last.number + 1 }));
      if (!nextExists && !this.finished) return;
      if (last.frames === undefined) {
        const size = sizeOf(this.fileOf(last));
        if (size % frameBytes !== 0) throw new Error(`${this.fileOf(last)} holds ${size} bytes, not a whole number of ${frameBytes}-byte frames`);
        last.frames = size / frameBytes;
      }
      // Released ahead, its frames may all be spent already.
      this.deleteSpent();
      if (!nextExists) return;
      this.segments.push({ number: last.number + 1, firstFrame: last.firstFrame + last.frames, deleted: false });
    }
  }

  /** Deletes the complete segments whose every frame is released. */
  private deleteSpent(): void {
    while (this.segments[this.oldestLive]?.deleted) this.oldestLive++;
    for (const segment of this.segments.slice(this.oldestLive)) {
      if (segment.deleted || segment.frames === undefined) continue;
      let spent = true;
      for (let frame = segment.firstFrame; frame < segment.firstFrame + segment.frames && spent; frame++) spent = this.released.has(frame);
      if (!spent) continue;
      for (let frame = segment.firstFrame; frame < segment.firstFrame + segment.frames; frame++) this.released.delete(frame);
      this.delete(segment);
    }
  }

  private delete(segment: Segment): void {
    if (segment.fd !== undefined) fs.closeSync(segment.fd);
    segment.fd = undefined;
    if (!segment.deleted) fs.rmSync(this.fileOf(segment), { force: true });
    segment.deleted = true;
  }

  private fileOf(segment: { number: number }): string {
    return path.join(this.dir, `${this.name}-${String(segment.number).padStart(6, "0")}.raw`);
  }
}

function openIfThere(file: string): number | undefined {
  try {
    return fs.openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
