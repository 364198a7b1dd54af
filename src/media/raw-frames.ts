/**
 * Fixed-size raw frames read off a pipe (ffmpeg's rawvideo output), and a pool of their
 * buffers so that frames dropped after use are filled again rather than reallocated.
 */
/**
 * Frame buffers of one size, handed back when their sample is dropped: a 720p video yields
 * a few hundred megabytes of full-size frames, which would otherwise all pass through the
 * garbage collector.
 */
export class FramePool {
  private free: Buffer[] = [];
  constructor(
    readonly frameBytes: number,
    /** Buffers kept for reuse at most (the rest are left to the collector). */
    private readonly maxFree: number,
  ) {}
  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafe(this.frameBytes);
  }
  give(buffer: Buffer): void {
    if (buffer.length === this.frameBytes && this.free.length < this.maxFree) this.free.push(buffer);
  }
}

/**
 * Reads fixed-size frames off a stream as they complete. Each frame is its own buffer,
 * filled straight from the chunks (one copy), because a kept sample outlives the chunks.
 */
export class FrameReader {
  private frame: Buffer;
  private filled = 0;
  constructor(
    private readonly frameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
    private readonly pool?: FramePool,
  ) {
    this.frame = this.allocate();
  }
  /** Bytes of a frame not yet complete (0 at the end of a well-formed stream). */
  get partial(): number {
    return this.filled;
  }
  private allocate(): Buffer {
    return this.pool?.take() ?? Buffer.allocUnsafe(this.frameBytes);
  }
  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      const copied = chunk.copy(this.frame, this.filled, offset, Math.min(chunk.length, offset + this.frameBytes - this.filled));
      this.filled += copied;
      offset += copied;
      if (this.filled === this.frameBytes) {
        const complete = this.frame;
        this.frame = this.allocate();
        this.filled = 0;
        this.onFrame(complete);
      }
    }
  }
}
