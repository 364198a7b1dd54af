/**
 * Equal-sized buffers handed out and given back, so that a video's frames reuse a few
 * allocations instead of making one each. Frame buffers live outside V8's heap, and each
 * megabyte allocated there counts towards a full garbage collection: a 35 s recording's
 * state frames alone (YUV read, RGB converted) came to some 60 MB a video, and the
 * collections they set off cost Node about as much CPU as converting the frames.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];

  /** `keep`: how many given-back buffers are held for reuse at most; more are left to the collector. */
  constructor(
    readonly bytes: number,
    private readonly keep = 4,
  ) {}

  /** A buffer of `bytes` bytes, its contents undefined. */
  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.bytes);
  }

  /** `buffer` came from take() and is no longer used by anyone. */
  give(buffer: Buffer): void {
    if (buffer.length !== this.bytes) throw new Error(`BufferPool: a ${buffer.length}-byte buffer given back to a pool of ${this.bytes}-byte buffers`);
    if (this.free.length < this.keep && !this.free.includes(buffer)) this.free.push(buffer);
  }
}
