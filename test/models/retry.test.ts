/** The retry policy's arithmetic: how `retry-after` is read and how waits are capped. */
import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../src/models/index.ts";
import { retryDelayMs } from "../../src/models/retry.ts";

const policy = { maxRetries: 3, retryBaseDelayMs: 1000, retryMaxDelayMs: 10_000 };

describe("retry policy", () => {
  it("reads retry-after as seconds or as an HTTP date, and ignores anything else", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("1", now)).toBe(1000);
    expect(parseRetryAfter(" 2.5 ", now)).toBe(2500);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("waits what the server asks, but never longer than the cap", () => {
    const asked = (retryAfterMs: number) => ({ kind: "http" as const, retryable: true, status: 429, retryAfterMs, detail: "" });
    expect(retryDelayMs(0, policy, asked(3000))).toBe(3000);
    expect(retryDelayMs(0, policy, asked(120_000))).toBe(10_000);
  });

  it("backs off exponentially with ±25 % jitter when the server says nothing", () => {
    const failure = { kind: "http" as const, retryable: true, status: 500, detail: "" };
    expect(retryDelayMs(0, policy, failure, () => 0)).toBe(750);
    expect(retryDelayMs(1, policy, failure, () => 1)).toBe(2500);
    expect(retryDelayMs(2, policy, failure, () => 0.5)).toBe(4000);
    expect(retryDelayMs(5, policy, failure, () => 0.5)).toBe(10_000);
  });
});
