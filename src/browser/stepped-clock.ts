/**
 * The stepped clock: for a page that never comes to rest on its own (a canvas game
 * redrawn every frame, balls that never stop), the page's time is Playwright's fake
 * clock, paused, and moved on only by `SteppedClock.advance` in steps of one frame. Its
 * timers, requestAnimationFrame, `Date` and `performance.now()` then see exactly the
 * same time at every picture of every run, so with the seeded Math.random the page shows
 * the same pixels when it is recorded and each time it is replayed, given the same
 * actions at the same moments of its clock.
 *
 * Why only such pages: CSS animations and transitions, network replies and the
 * compositor keep real time, so a page whose script waits on them mixes the two clocks.
 * The steps are paced by real time (one step a frame), which keeps that mix close to what
 * a real clock gives, but a page at rest needs none of this: its pictures already agree.
 *
 * The recorder decides: a page still moving when the wait after opening reaches its bound,
 * with nothing left loading, is opened once more under this clock, and recorded under it
 * when that brings it to rest (src/recorder/preflight.ts); a page whose timers changed it
 * across pictures is recorded again under it (src/recorder/late-timers.ts). The recorder
 * writes how far the clock went before and after every action into the task line
 * (`SteppedClockPlan`); the corrected profile's replay advances it by the same amounts. While the clock is paused
 * between advances the page's scripts are still: our own page scripts must not wait on
 * its requestAnimationFrame or timers then.
 */
import type { BrowserContext, Page } from "playwright";
import { IwrError } from "../errors.ts";
import { PROTOCOL } from "../protocol.ts";
import { settleWithin } from "./deadline.ts";
import type { SettleRecord } from "./settle.ts";

/** One step of the page's clock: a frame at 60 Hz, rounded as fake timers count frames. */
const CLOCK_STEP_MS = 16;

/** The page's clock: the real one shifted to the task's start (determinism.ts), or the stepped one. */
export type PageClock = "shifted" | "stepped";

/** How far a stepped clock went between a task's pictures, in ms of the page's time. */
export interface SteppedClockPlan {
  /** From opening the page to step_0. */
  readonly openMs: number;
  /** By action index: from the previous picture to the action. */
  readonly beforeActionMs: readonly number[];
  /** By action index: from the action to the picture after it. */
  readonly afterActionMs: readonly number[];
}

/** Playwright's clock in every page of `context`, paused at `startMs` before any page script runs. */
export async function installPausedClock(context: BrowserContext, startMs: number): Promise<void> {
  await context.clock.install({ time: startMs });
  await context.clock.pauseAt(startMs);
}

/**
 * Whether a page needs the stepped clock, from the wait after it opened: it never came to
 * rest because its picture or layout kept changing, while nothing was left loading (a
 * page still loading comes to rest once it has loaded).
 */
export function keepsMovingOnItsOwn(settle: SettleRecord): boolean {
  return !settle.atRest && settle.keptMoving === true && settle.stillLoading !== true;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function runStepWithin(page: Page, ms: number, limitMs: number): Promise<void> {
  const step = await settleWithin(page.clock.runFor(ms), limitMs);
  if (step.status === "done") return;
  if (step.status === "failed") throw step.error;
  throw new IwrError("PAGE_TIMEOUT", `one ${ms} ms step of the page's clock took over ${limitMs} ms (a frame or timer that does not end)`);
}

/** Moves a page's paused clock on, one frame at a time at about real speed; counts how far it went. */
export class SteppedClock {
  private advanced = 0;

  /**
   * `runStep` runs one step's timers and frames, each within a time limit (Playwright's
   * own has none), so a page stuck in one frame fails there instead of hanging; the replay
   * passes its page time limit.
   */
  constructor(
    page: Page,
    private readonly runStep: (ms: number) => Promise<void> = (ms) => runStepWithin(page, ms, PROTOCOL.actionTimeoutMs),
  ) {}

  /** Ms of page time advanced since this object was made. */
  get advancedMs(): number {
    return this.advanced;
  }

  /**
   * Advances the clock by `ms` (rounded to whole steps of CLOCK_STEP_MS, at least one
   * when `ms` > 0), each step's timers and frames run before the next, paced so the page
   * time never runs ahead of real time: a page whose frames take longer just runs slower.
   */
  async advance(ms: number): Promise<void> {
    const steps = ms > 0 ? Math.max(1, Math.round(ms / CLOCK_STEP_MS)) : 0;
    const started = Date.now();
    for (let step = 1; step <= steps; step++) {
      await this.runStep(CLOCK_STEP_MS);
      this.advanced += CLOCK_STEP_MS;
      const ahead = started + step * CLOCK_STEP_MS - Date.now();
      if (ahead > 0) await sleep(ahead);
    }
  }
}
