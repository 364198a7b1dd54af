/**
 * Pages whose pictures depend on the pace between actions: a toast removed four seconds
 * after it was shown, a "Saved" notice that fades, a banner that slides in a while after
 * load. The recorder pauses as a person does (seconds between actions); the replay acts
 * as soon as the page is at rest. Under the shifted real clock (src/browser/determinism.ts)
 * such a timer therefore fires before a later picture in the recording and after it on
 * replay, and the true page no longer reproduces its own checkpoints.
 *
 * The rule, in general terms: a timer callback (setTimeout or setInterval) that changes
 * the document — directly or in the promise continuations it resolves — while the timer
 * had been set before the latest picture is a "late timer change": the page changed itself
 * across a picture, by an amount of time the replay does not reproduce. Timers set and
 * fired within one action's wait for rest are not late: the replay waits for rest too.
 * The recorder re-records a page that made a late timer change under the stepped clock
 * (src/browser/stepped-clock.ts), whose plan carries the recording's pace into the replay.
 *
 * The watch is our own init script in the page's world, installed only in a recording
 * under the shifted clock: it wraps setTimeout and setInterval (the callback, its
 * arguments and the returned id are the page's own) and watches the document with a
 * MutationObserver of its own, which only counts changes.
 */
import type { Page } from "playwright";

/** A DOM change made by a timer callback whose timer was set before the latest picture. */
export interface LateTimerChange {
  /** The delay the page asked for, in ms. */
  readonly delayMs: number;
  /** How long before the latest picture the timer was set (or an interval last fired), in ms. */
  readonly setBeforePictureMs: number;
}

/** Where the page-side watch keeps its state: a symbol, so no page script meets it by name. */
const WATCH_KEY = "iwr.lateTimerChanges";

/** At most this many late changes are kept between two pictures: one is enough to decide, a few to report. */
const MAX_NOTED = 20;

export const LATE_TIMER_WATCH_SCRIPT = `(() => {
  const key = Symbol.for(${JSON.stringify(WATCH_KEY)});
  if (window[key]) return;
  const state = { pictureAt: -Infinity, late: [] };
  // Records reach the callback in a microtask of their own, possibly before a check runs: both are counted.
  let changes = 0;
  const observer = new MutationObserver((records) => { changes += records.length; });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const changesSoFar = () => (changes += observer.takeRecords().length);
  const wrap = (real, repeating) => function (handler, delay, ...args) {
    if (typeof handler !== "function") return real.call(this, handler, delay, ...args);
    let setAt = performance.now();
    const watched = function (...callArgs) {
      const before = changesSoFar();
      const firedAt = performance.now();
      const setBefore = state.pictureAt - setAt;
      // Checked after the callback's own promise continuations have run (queued before this one).
      const check = () => {
        if (changesSoFar() > before && setBefore > 0 && state.late.length < ${MAX_NOTED}) {
          state.late.push({ delayMs: Math.max(0, Number(delay) || 0), setBeforePictureMs: Math.round(setBefore) });
        }
      };
      try {
        return handler.apply(this, callArgs);
      } finally {
        if (repeating) setAt = firedAt;
        queueMicrotask(check);
      }
    };
    return real.call(this, watched, delay, ...args);
  };
  window.setTimeout = wrap(window.setTimeout, false);
  window.setInterval = wrap(window.setInterval, true);
  Object.defineProperty(window, key, {
    value: { picture: () => { const late = state.late; state.late = []; state.pictureAt = performance.now(); return late; } },
  });
})();`;

/**
 * Tells the page's watch a picture was just taken and returns the late timer changes made
 * since the previous one (none when the watch is not installed, or the page is gone).
 */
export async function notePicture(page: Page): Promise<LateTimerChange[]> {
  return page
    .evaluate((key) => {
      const watch = (window as unknown as Record<symbol, { picture: () => LateTimerChange[] } | undefined>)[Symbol.for(key)];
      return watch ? watch.picture() : [];
    }, WATCH_KEY)
    .catch(() => []);
}

/** recording.json's and the log's account of late timer changes: how many, and the delays seen. */
export function describeLateTimerChanges(changes: readonly LateTimerChange[]): string {
  const delays = [...new Set(changes.map((change) => change.delayMs))].sort((a, b) => a - b);
  return (
    `the page changed itself ${changes.length} time(s) on a timer set before a picture ` +
    `(delay ${delays.map((delay) => `${delay} ms`).join(", ")}): its pictures depend on the pace between actions`
  );
}
