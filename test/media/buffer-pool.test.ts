/**
 * The pool that lets a video's frames reuse their buffers: what comes back is what was
 * given, it holds no more than it was told to keep, and a buffer of the wrong size is
 * refused rather than handed to a reader of another frame size.
 */
import { describe, expect, it } from "vitest";
import { BufferPool } from "../../src/media/buffer-pool.ts";

describe("buffer pool", () => {
  it("hands back a buffer given back, and makes new ones when none is free", () => {
    const pool = new BufferPool(16);
    const first = pool.take();
    const second = pool.take();
    expect(first.length).toBe(16);
    expect(second).not.toBe(first);
    pool.give(first);
    expect(pool.take()).toBe(first);
    expect(pool.take()).not.toBe(first);
  });

  it("keeps at most `keep` buffers, and never the same one twice", () => {
    const pool = new BufferPool(8, 2);
    const taken = [pool.take(), pool.take(), pool.take()];
    for (const buffer of taken) pool.give(buffer);
    pool.give(taken[0]!);
    const again = [pool.take(), pool.take(), pool.take()];
    // Two kept (the first two given back, newest first), the third made anew.
    expect(again[0]).toBe(taken[1]);
    expect(again[1]).toBe(taken[0]);
    expect(taken).not.toContain(again[2]);
  });

  it("refuses a buffer of another size", () => {
    const pool = new BufferPool(8);
    expect(() => pool.give(Buffer.alloc(4))).toThrow(/a 4-byte buffer given back to a pool of 8-byte buffers/);
  });
});
