/**
 * settleWithin: the value, the failure or the time-out, and a wait cancelled when its answer
 * no longer matters (its page died) clears its timer at once: a process is never kept alive
 * by a timer for a page that is gone.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { settleWithin } from "../../src/browser/deadline.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("settleWithin", () => {
  it("gives the value, the failure, or a time-out, and leaves no timer behind", async () => {
    vi.useFakeTimers();
    expect(await settleWithin(Promise.resolve(7), 30_000)).toEqual({ status: "done", value: 7 });
    const failed = await settleWithin(Promise.reject(new Error("boom")), 30_000);
    expect(failed.status).toBe("failed");
    const hung = settleWithin(new Promise(() => undefined), 30_000);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await hung).toEqual({ status: "timed-out" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("is cancelled by its signal: settled at once, its 30 s timer cleared", async () => {
    vi.useFakeTimers();
    const death = new AbortController();
    const waiting = settleWithin(new Promise(() => undefined), 30_000, { cancel: death.signal });
    expect(vi.getTimerCount()).toBe(1);
    death.abort();
    expect(await waiting).toEqual({ status: "cancelled" });
    expect(vi.getTimerCount()).toBe(0);
    // Already cancelled: no timer is left either.
    expect(await settleWithin(new Promise(() => undefined), 30_000, { cancel: death.signal })).toEqual({ status: "cancelled" });
    expect(vi.getTimerCount()).toBe(0);
  });
});
