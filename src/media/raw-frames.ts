/**
 * Fixed-size raw frames read off a pipe (ffmpeg's rawvideo output).
 */
/**
 * Reads fixed-size frames off a stream as they complete. Each frame is its own buffer,
 * filled straight from the chunks (one copy): the segmenter keeps some frames for a
 * while, after the chunks they came in are gone.
 */
export class FrameReader {
  private frame: Buffer;
  private filled = 0;
  constructor(
    private readonly frameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
  ) {
    this.frame = Buffer.allocUnsafe(frameBytes);
  }
  /** Bytes of a frame not yet complete (0 at the end of a well-formed stream). */
  get partial(): number {
    return this.filled;
  }
  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      const copied = chunk.copy(this.frame, this.filled, offset, Math.min(chunk.length, offset + this.frameBytes - this.filled));
      this.filled += copied;
      offset += copied;
      if (this.filled === this.frameBytes) {
        const complete = this.frame;
        this.frame = Buffer.allocUnsafe(this.frameBytes);
        this.filled = 0;
        this.onFrame(complete);
      }
    }
  }
}
