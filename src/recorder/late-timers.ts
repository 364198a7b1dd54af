/**
 * Pages whose pictures depend on the pace between actions: a toast removed four seconds
 * after it was shown, a "Saved" notice a timer takes away, a clock ticking every second.
 * The recorder pauses as a person does (seconds between actions); the replay acts
 * as soon as the page is at rest. Under the shifted real clock (src/browser/determinism.ts)
 * such a timer therefore fires before a later picture in the recording and after it on
 * replay, and the true page no longer reproduces its own checkpoints.
 *
 * The rule, in general terms: a timer callback (setTimeout or setInterval) that changes
 * the document — directly or in the promise continuations it resolves — while the timer
 * had been set before the latest picture (an interval: its previous tick came before it)
 * is a "late timer change": the page changed itself across a picture, by an amount of
 * time the replay does not reproduce. Timers set and fired between two pictures are not
 * late: within a wait for rest the replay waits too. (One set and fired in the pause
 * before an action, such as a tooltip shown after a hover, is not late either, though the
 * replay makes no such pause: a gap of the rule.)
 * The recorder re-records a page that made a late timer change under the stepped clock
 * (src/browser/stepped-clock.ts), whose plan carries the recording's pace into the replay.
 *
 * The watch is our own init script in the page's world, installed only in a recording
 * under the shifted clock: it wraps setTimeout and setInterval (the callback, its
 * arguments and the returned id are the page's own) and watches the document with a
 * MutationObserver of its own, which only counts changes.
 *
 * What it does not see: a change the timer's task leaves to another task (a framework
 * rendering in a scheduler task of its own, React 18's among them; requestAnimationFrame
 * or transitionend handlers), changes inside shadow roots, typed values, canvas drawing
 * and scrolling. An interval that rewrites the same text every tick is counted: such a page
 * is paced on replay, which costs time only.
 */
import type { Page } from "playwright";

/** The document changes made by timers set before a picture, counted by the delay the page asked for. */
export interface LateTimerChanges {
  readonly delayMs: number;
  readonly count: number;
}

/** Where the page-side watch keeps its state: a registered symbol, which no page script meets by accident. */
const WATCH_KEY = "iwr.lateTimerChanges";

/** At most this many different delays are told apart; later ones are counted under the last. */
const MAX_DELAYS = 20;

/**
 * How many microtask turns a check waits for the callback's promise continuations: each
 * `await` of a resolved chain takes one to three, so this covers a timer awaited through
 * several async helpers. Everything that runs in those turns belongs to the timer's task.
 */
const CONTINUATION_TURNS = 32;

export const LATE_TIMER_WATCH_SCRIPT = `(() => {
  const key = Symbol.for(${JSON.stringify(WATCH_KEY)});
  if (window[key]) return;
  let pictureAt = -Infinity;
  let late = new Map();
  // Records reach the callback in a microtask of their own, possibly before a check runs: both are counted.
  let changes = 0;
  const observer = new MutationObserver((records) => { changes += records.length; });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const changesSoFar = () => (changes += observer.takeRecords().length);
  const note = (delay) => {
    const known = late.has(delay) || late.size < ${MAX_DELAYS} ? delay : [...late.keys()].pop();
    late.set(known, (late.get(known) || 0) + 1);
  };
  const wrap = (real, repeating) => function (handler, delay, ...args) {
    if (typeof handler !== "function") return real.call(this, handler, delay, ...args);
    let setAt = performance.now();
    const watched = function (...callArgs) {
      const before = changesSoFar();
      const firedAt = performance.now();
      const setBeforePicture = setAt < pictureAt;
      let turns = 0;
      const check = () => {
        if (++turns < ${CONTINUATION_TURNS}) return queueMicrotask(check);
        if (changesSoFar() > before && setBeforePicture) note(Math.max(0, Number(delay) || 0));
      };
      try {
        return handler.apply(this, callArgs);
      } finally {
        // An interval's next tick counts from this one.
        if (repeating) setAt = firedAt;
        queueMicrotask(check);
      }
    };
    return real.call(this, watched, delay, ...args);
  };
  window.setTimeout = wrap(window.setTimeout, false);
  window.setInterval = wrap(window.setInterval, true);
  const take = () => { const taken = [...late].map(([delayMs, count]) => ({ delayMs, count })); late = new Map(); return taken; };
  Object.defineProperty(window, key, {
    value: { collect: take, picture: () => { pictureAt = performance.now(); return take(); } },
  });
})();`;

type WatchCall = "collect" | "picture";

async function callWatch(page: Page, call: WatchCall): Promise<LateTimerChanges[]> {
  return page
    .evaluate(
      ([key, name]) => {
        const watch = (window as unknown as Record<symbol, Record<WatchCall, () => LateTimerChanges[]> | undefined>)[Symbol.for(key)];
        return watch ? watch[name]() : [];
      },
      [WATCH_KEY, call] as const,
    )
    .catch(() => []);
}

/**
 * Tells the page's watch a picture is being taken (call it just before) and returns the
 * late timer changes made since the last call (none when the watch is not installed, or
 * the page is gone).
 */
export function notePicture(page: Page): Promise<LateTimerChanges[]> {
  return callWatch(page, "picture");
}

/** The late timer changes made since the last call, before an action that may leave the document (its watch goes with it). */
export function collectLateTimerChanges(page: Page): Promise<LateTimerChanges[]> {
  return callWatch(page, "collect");
}

/** Adds up the changes by delay. */
export function mergeLateTimerChanges(changes: readonly LateTimerChanges[]): LateTimerChanges[] {
  const byDelay = new Map<number, number>();
  for (const change of changes) byDelay.set(change.delayMs, (byDelay.get(change.delayMs) ?? 0) + change.count);
  return [...byDelay].sort(([a], [b]) => a - b).map(([delayMs, count]) => ({ delayMs, count }));
}

/** recording.json's and the log's account of a session's late timer changes (merged by delay): how many, and the delays seen. */
export function describeLateTimerChanges(changes: readonly LateTimerChanges[]): string {
  const total = changes.reduce((sum, change) => sum + change.count, 0);
  return (
    `the page changed itself ${total} time(s) on a timer set before a picture ` +
    `(delay ${changes.map((change) => `${change.delayMs} ms`).join(", ")}): its pictures depend on the pace between actions`
  );
}
