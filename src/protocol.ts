/**
 * Every constant of the benchmark's protocol (IWR-PROTOCOL.md §2–§3) in one place.
 * The recorder settles checkpoints with the same timings the evaluator replays with,
 * so both import from here; nothing else hard-codes a wait.
 */
export const PROTOCOL = Object.freeze({
  /** §3.1: wait after opening the page, before evalpoint 0. */
  initialSettleMs: 1000,
  /** §3.2: wait after each executed action, before its evalpoint. */
  actionSettleMs: 500,
  /** §3.2: limit for executing one action. */
  actionTimeoutMs: 30_000,
  /** §3.2 Scroll: fraction of the viewport height scrolled down. */
  scrollViewportFraction: 0.5,
  /** §3.2 Scroll: succeeds only if scrollY changed by more than this. */
  scrollMinDeltaPx: 5,
  /** §2: frames sampled per second of video. */
  framesPerSecond: 1,
  /** §2: longer videos get exactly this many frames, evenly spaced. */
  maxVideoFrames: 64,
  /** §2: images sent in total (sheets first, frames fill the rest). */
  maxImages: 70,
  /** §2: default output budget for generation. */
  maxTokens: 16_384,
  /** §3.6: weights of the final score. */
  weights: Object.freeze({ ifs: 0.7, vfs: 0.3, lfsInVfs: 0.5, hfsInVfs: 0.5 }),
  /** §3.5 MLLM rubric (points out of 100). */
  mllmRubric: Object.freeze({ layout: 10, elements: 15, contentAndText: 40, style: 15, overall: 20 }),
});

export type ProtocolSettings = typeof PROTOCOL;

/**
 * The largest viewport side we open a page at (Chromium's own limits and memory make
 * anything larger impractical). One limit, read by the task validator and the page
 * host, so a task that validates is a task the evaluator can open.
 */
export const MAX_VIEWPORT_SIDE = 8192;
