/**
 * Deterministic mode: a seeded `Math.random` and a fixed clock start, installed in a
 * browser context before any page script runs. The recorder and the evaluator call the
 * same `installDeterminism`, so a page that draws random numbers or reads the time (a
 * game spawning tiles, a greeting by the hour) shows the same states when it is recorded
 * and every time it is replayed — given the same actions.
 *
 * The clock is shifted, not faked (a page that never rests aside, below): `Date` (and
 * `Date.now()`, `new Date()`) starts at `clockStartMs` when the document starts and then
 * runs at real speed, while timers, requestAnimationFrame and `performance` are the
 * browser's own. Playwright's clock
 * (`context.clock`) was tried first: it replaces timers and requestAnimationFrame too,
 * and a bundled game recorded under it had video frames that lagged its DOM (the
 * self-check of its own reference page fell from behaviour 1 to 0.67); pinning the
 * starting instant is all a page needs to show the same state.
 * `crypto.getRandomValues` is left alone: pages use it for identifiers, rarely for what
 * they show, and replacing it would weaken a page's own security code.
 *
 * A page that never comes to rest (a canvas redrawn every frame) is the exception: with
 * real timers no two screenshots of it agree, so such a task is recorded and replayed
 * under a stepped clock instead (stepped-clock.ts), and its line says how far the clock
 * went between pictures.
 */
import type { BrowserContext } from "playwright";
import { installPausedClock, type PageClock, type SteppedClockPlan } from "./stepped-clock.ts";

export interface Determinism {
  /** Seed of the page's Math.random (an unsigned 32-bit integer). */
  readonly randomSeed: number;
  /** What Date.now() returns when the page starts, in ms since the epoch. */
  readonly clockStartMs: number;
  /** Set when the task was recorded under a stepped clock: how far the clock went between pictures. */
  readonly steppedClock?: SteppedClockPlan;
}

/** The recorder's seed when neither the script nor the command line gives one. */
export const DEFAULT_RANDOM_SEED = 20_240_601;
/** 2025-01-15 09:00 UTC: a weekday morning, so pages that greet by the hour or the day show an ordinary state. */
export const DEFAULT_CLOCK_START_MS = Date.UTC(2025, 0, 15, 9, 0, 0);

export const MAX_RANDOM_SEED = 0xffff_ffff;

/**
 * Replaces Math.random in every document of the context with mulberry32 seeded by
 * `seed` (a small generator with a full 2^32 period, good enough for page behaviour).
 * Each document starts the sequence afresh, as a reload of the real page would draw anew.
 */
function seededRandomScript(seed: number): string {
  return `(() => {
  let state = ${seed >>> 0};
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Object.defineProperty(Math, "random", { value: next, configurable: true, writable: true });
})();`;
}

/**
 * Shifts Date so the document starts at `startMs`: a subclass whose argument-less
 * construction and `now()` add a fixed offset, called as a function it gives the
 * shifted time's string, as Date() does. Dates built from arguments are untouched.
 */
function shiftedClockScript(startMs: number): string {
  return `(() => {
  const RealDate = Date;
  const offset = ${Math.trunc(startMs)} - RealDate.now();
  class ShiftedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offset;
    }
  }
  const DateWithCall = new Proxy(ShiftedDate, { apply: () => new ShiftedDate().toString() });
  Object.defineProperty(globalThis, "Date", { value: DateWithCall, configurable: true, writable: true });
})();`;
}

/**
 * Installs the seeded Math.random and the clock in `context`; call before its first page
 * opens. The clock is shifted, or with `clock: "stepped"` Playwright's, paused at the
 * start until the caller advances it (stepped-clock.ts).
 */
export async function installDeterminism(context: BrowserContext, determinism: Determinism, clock: PageClock = "shifted"): Promise<void> {
  await context.addInitScript({ content: seededRandomScript(determinism.randomSeed) });
  if (clock === "stepped") await installPausedClock(context, determinism.clockStartMs);
  else await context.addInitScript({ content: shiftedClockScript(determinism.clockStartMs) });
}

/** The task line's form of the settings (an extra field the harness ignores). */
export interface DeterminismLineField {
  random_seed: number;
  clock_start: string;
  stepped_clock?: { open_ms: number; before_action_ms: number[]; after_action_ms: number[] };
}

export function determinismLineField(determinism: Determinism): DeterminismLineField {
  const field: DeterminismLineField = { random_seed: determinism.randomSeed, clock_start: new Date(determinism.clockStartMs).toISOString() };
  const plan = determinism.steppedClock;
  if (plan) field.stepped_clock = { open_ms: plan.openMs, before_action_ms: [...plan.beforeActionMs], after_action_ms: [...plan.afterActionMs] };
  return field;
}

export function determinismFromLine(field: DeterminismLineField): Determinism {
  const plan = field.stepped_clock;
  return {
    randomSeed: field.random_seed,
    clockStartMs: Date.parse(field.clock_start),
    ...(plan ? { steppedClock: { openMs: plan.open_ms, beforeActionMs: plan.before_action_ms, afterActionMs: plan.after_action_ms } } : {}),
  };
}
