/**
 * Waiting until a page is at rest before a screenshot is kept (the rule AT_REST in
 * src/protocol.ts describes). The recorder takes every checkpoint and reference state
 * this way, and the corrected profile's replay takes its screenshots the same way, so a
 * checkpoint never shows a half-finished transition that the replay then catches at
 * another moment.
 *
 * What is looked at (from shortly before the last quiet window of the fixed wait: what
 * happens earlier cannot change when it ends):
 * - every `pollIntervalMs`, in the page (one script): finite animations and transitions
 *   still running on the document's timeline (`document.getAnimations()`: CSS, Web
 *   Animations and the View Transition pseudo-elements), a View Transition in progress,
 *   web fonts loading, images in the viewport not yet loaded, and a signature of the
 *   layout (the scroll position and the boxes of the elements in view, as drawn:
 *   transforms included); and from outside, requests the page's look depends on that are
 *   still in flight;
 * - at both ends of each quiet window (and once a window while something is pending, and
 *   at the bound), a half-size screenshot of the viewport, caret hidden (stillness-look.ts; a canvas or a
 *   paint-only change moves no box). A screenshot costs about four times the script, so the
 *   pictures are compared across the window rather than at every poll: a page is at rest
 *   when its layout stayed put at every poll and its picture is the same at the window's two
 *   ends. What only repaints and changes back between two looks is not seen; a paint-only
 *   change that stays is seen by the next look, which opens the next window.
 *
 * Endless animations (an infinite spinner) and scroll-driven ones are not waited for as
 * animations, since they never end; if they move what is on screen, the screen check
 * keeps the page from counting as at rest and the wait ends at its bound (unless the
 * animation's picture repeats exactly at the pace of the looks, which the looks cannot tell
 * from a still page).
 */
import type { Page, Request } from "playwright";
import { AT_REST } from "../protocol.ts";
import { evaluateInPage } from "./page-scripts.ts";
import { endStillnessLooks, stillnessScreen } from "./stillness-look.ts";

/** How long to wait at least, the quiet window, the polling pace and the bound, in ms. */
export interface SettleTimings {
  /** The wait never ends earlier than this (the profile's fixed wait). */
  readonly minWaitMs: number;
  /** The layout must have stayed put this long (read every poll), and the screen look the same at both ends of it. */
  readonly quietWindowMs: number;
  readonly pollIntervalMs: number;
  /** The longest wait: past it the screenshot is taken as the page is. */
  readonly boundMs: number;
}

/** What the wait came to, as recording.json and replay.json keep it. */
export interface SettleRecord {
  /** From the start of the wait to the moment the page counted as at rest, or the bound. */
  readonly waitedMs: number;
  /** False when the bound was reached first. */
  readonly atRest: boolean;
  /** What was still going on at the bound (empty when at rest), e.g. "the screen kept changing". */
  readonly stillGoing: readonly string[];
  /** At the bound: the layout or the picture was still changing between the last looks. */
  readonly keptMoving?: boolean;
  /** At the bound: a request, web font or image in view was still loading. */
  readonly stillLoading?: boolean;
}

/** One in-page look at what could still change the picture. */
export interface PageActivity {
  /** Finite animations and transitions running (or about to start) on the document timeline. */
  readonly runningAnimations: number;
  /** Animations that never end (infinite iterations); reported, not waited for. */
  readonly endlessAnimations: number;
  readonly viewTransition: boolean;
  readonly fontsLoading: boolean;
  /** `<img>` elements in the viewport not yet loaded (lazy images out of view are not counted). */
  readonly imagesLoading: number;
  /** Scroll position and the boxes of the elements in view, as one string. */
  readonly layout: string;
}

/** What the wait needs from a page; the replay wraps each call in its page time limit. */
export interface SettleProbe {
  activity(): Promise<PageActivity>;
  /** A viewport picture, compared byte for byte with the latest one. */
  screen(): Promise<Buffer>;
  /** Requests in flight that the page's look depends on. */
  requestsInFlight(): number;
  /** Undoes what looking did to the page (endStillnessLooks); called once the wait is over, however it ended. */
  release(): Promise<void>;
}

/** A layout signature covers at most this many elements (a huge page is still checked, by its first ones). */
const MAX_LAYOUT_ELEMENTS = 4000;

/** Runs in the page (as source text, see page-scripts.ts). */
function readActivityInPage(maxElements: number): PageActivity {
  const width = window.innerWidth;
  const height = window.innerHeight;
  let runningAnimations = 0;
  let endlessAnimations = 0;
  for (const animation of document.getAnimations()) {
    if (animation.playState !== "running" && !animation.pending) continue;
    // Scroll-driven animations move only when the page scrolls: nothing to wait for.
    if (animation.timeline !== document.timeline) continue;
    const end = animation.effect ? animation.effect.getComputedTiming().endTime : 0;
    if (typeof end === "number" && Number.isFinite(end)) runningAnimations += 1;
    else endlessAnimations += 1;
  }
  const withTransition = document as Document & { activeViewTransition?: unknown };
  let viewTransition = Boolean(withTransition.activeViewTransition);
  if (!viewTransition) {
    try {
      viewTransition = document.documentElement.matches(":active-view-transition");
    } catch {
      // A browser without the selector: the pseudo-elements' animations still count above.
    }
  }
  let imagesLoading = 0;
  for (const image of Array.from(document.images)) {
    if (image.complete) continue;
    const box = image.getBoundingClientRect();
    if (box.bottom > 0 && box.right > 0 && box.top < height && box.left < width) imagesLoading += 1;
  }
  // FNV-1a over the rounded boxes of the elements in view, with the scroll position.
  let hash = 0x811c9dc5;
  const mix = (value: number) => {
    hash = Math.imul(hash ^ (Math.round(value) & 0xffff), 0x01000193) >>> 0;
  };
  mix(window.scrollX);
  mix(window.scrollY);
  const elements = document.getElementsByTagName("*");
  const count = Math.min(elements.length, maxElements);
  let inView = 0;
  for (let index = 0; index < count; index++) {
    const box = (elements[index] as Element).getBoundingClientRect();
    if (box.bottom <= 0 || box.right <= 0 || box.top >= height || box.left >= width) continue;
    inView += 1;
    mix(box.left);
    mix(box.top);
    mix(box.width);
    mix(box.height);
  }
  return {
    runningAnimations,
    endlessAnimations,
    viewTransition,
    fontsLoading: document.fonts ? document.fonts.status === "loading" : false,
    imagesLoading,
    layout: `${inView}:${hash.toString(16)}`,
  };
}

export function readPageActivity(page: Page): Promise<PageActivity> {
  return evaluateInPage(page, readActivityInPage, MAX_LAYOUT_ELEMENTS);
}

/**
 * Requests whose answer changes what the page shows. Media streams, websockets, event
 * streams, beacons and pings may stay open for as long as the page lives: not counted.
 */
const RENDERING_RESOURCE_TYPES = new Set(["document", "stylesheet", "image", "font", "script", "fetch", "xhr", "texttrack", "manifest"]);

/**
 * A page making more requests than this is flooding (the host tears such a page down):
 * past it the requests are no longer followed, so no more of their events are asked for.
 */
const MAX_FOLLOWED_REQUESTS = 1000;

/** Counts a page's requests in flight (those RENDERING_RESOURCE_TYPES name); owns its listeners until `dispose`. */
export class RequestsInFlight {
  private readonly pending = new Set<Request>();
  private seen = 0;
  private readonly onRequest = (request: Request): void => {
    this.seen += 1;
    if (this.seen > MAX_FOLLOWED_REQUESTS) this.dispose();
    else if (RENDERING_RESOURCE_TYPES.has(request.resourceType())) this.pending.add(request);
  };
  private readonly onDone = (request: Request): void => {
    this.pending.delete(request);
  };

  constructor(private readonly page: Page) {
    page.on("request", this.onRequest);
    page.on("requestfinished", this.onDone);
    page.on("requestfailed", this.onDone);
  }

  count(): number {
    return this.pending.size;
  }

  dispose(): void {
    this.page.off("request", this.onRequest);
    this.page.off("requestfinished", this.onDone);
    this.page.off("requestfailed", this.onDone);
    this.pending.clear();
  }
}

/** The probe of a plain page (the recorder's): each call at most `callTimeoutMs`. */
export function pageSettleProbe(page: Page, requests: RequestsInFlight, callTimeoutMs: number): SettleProbe {
  return {
    activity: () => readPageActivity(page),
    screen: () => stillnessScreen(page, callTimeoutMs),
    requestsInFlight: () => requests.count(),
    release: () => endStillnessLooks(page, callTimeoutMs),
  };
}

/** Why the page is not at rest yet, in words; empty when nothing but the clock and the quiet window is left. */
function activityReasons(activity: PageActivity, requests: number): string[] {
  const reasons: string[] = [];
  const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  if (activity.viewTransition) reasons.push("a View Transition was running");
  if (activity.runningAnimations > 0)
    reasons.push(`${plural(activity.runningAnimations, "animation or transition was", "animations or transitions were")} running`);
  if (activity.fontsLoading) reasons.push("web fonts were loading");
  if (activity.imagesLoading > 0) reasons.push(`${plural(activity.imagesLoading, "image", "images")} in view had not loaded`);
  if (requests > 0) reasons.push(`${plural(requests, "request was", "requests were")} in flight`);
  return reasons;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the page is at rest (see the module comment), or `boundMs` has passed. A
 * probe call that throws ends the wait with that error (the caller decides what a
 * broken page means).
 */
export async function waitUntilAtRest(probe: SettleProbe, timings: SettleTimings, now: () => number = Date.now): Promise<SettleRecord> {
  const started = now();
  try {
    // The page must stay unchanged through the quiet window that ends the fixed wait at the
    // earliest: what it does before that window cannot make the wait end sooner or later. The
    // looks start two polls before the window: the first look of a wait is the slowest (it
    // opens the session and styles the documents), and its end is when the window is counted from.
    const unwatched = Math.min(timings.minWaitMs - timings.quietWindowMs - 2 * timings.pollIntervalMs, timings.boundMs);
    if (unwatched > 0) await sleep(unwatched);
    return await watchUntilAtRest(probe, timings, started, now);
  } finally {
    await probe.release();
  }
}

async function watchUntilAtRest(probe: SettleProbe, timings: SettleTimings, started: number, now: () => number): Promise<SettleRecord> {
  let layout: string | undefined;
  /** The quiet window under way: when its first look was taken (every look since showed the same picture). */
  let quiet: { openedAt: number } | undefined;
  /** The latest look, and when it was taken. */
  let last: { screen: Buffer; at: number } | undefined;
  for (;;) {
    const activity = await probe.activity();
    const readAt = now();
    const layoutMoved = layout !== undefined && activity.layout !== layout;
    layout = activity.layout;
    // A box that moved closes the window: the next look opens another.
    if (layoutMoved) quiet = undefined;
    const reasons = activityReasons(activity, probe.requestsInFlight());
    const elapsed = readAt - started;
    const atBound = elapsed >= timings.boundMs;
    const windowMs = quiet ? readAt - quiet.openedAt : 0;
    const mayEnd = quiet !== undefined && elapsed >= timings.minWaitMs && windowMs >= timings.quietWindowMs && reasons.length === 0;
    // The screen is looked at where a window opens and where it may close, once a window
    // while something is still pending (so a repaint then starts the next window in time),
    // and at the bound to say what kept changing. In between the layout is read every poll,
    // so a box that moves is seen as soon as it moves; what only repaints (a canvas, a
    // colour) and changes back between two looks is not.
    const pendingLook = quiet !== undefined && reasons.length > 0 && last !== undefined && readAt - last.at >= timings.quietWindowMs;
    let screenMoved = false;
    let endedAt = readAt;
    if (quiet === undefined || mayEnd || pendingLook || atBound) {
      const screen = await probe.screen();
      const lookedAt = now();
      endedAt = lookedAt;
      screenMoved = last !== undefined && !screen.equals(last.screen);
      last = { screen, at: lookedAt };
      if (mayEnd && !screenMoved) return { waitedMs: lookedAt - started, atRest: true, stillGoing: [] };
      if (quiet === undefined || screenMoved) quiet = { openedAt: lookedAt };
    }
    if (atBound) {
      if (layoutMoved) reasons.push("elements kept moving or changing size");
      if (screenMoved) reasons.push(`the screen kept changing${layoutMoved ? "" : " (no element moved: a canvas, video or paint-only animation)"}`);
      if (!layoutMoved && !screenMoved && windowMs < timings.quietWindowMs) {
        reasons.push(`the page last changed ${windowMs} ms before the bound (${timings.quietWindowMs} ms unchanged needed)`);
      }
      if (activity.endlessAnimations > 0) reasons.push(`${activity.endlessAnimations} endless animation(s) on the page`);
      const stillLoading = activity.fontsLoading || activity.imagesLoading > 0 || probe.requestsInFlight() > 0;
      return { waitedMs: endedAt - started, atRest: false, stillGoing: reasons, keptMoving: layoutMoved || screenMoved, stillLoading };
    }
    // Never sleep past the bound.
    await sleep(Math.max(0, Math.min(timings.pollIntervalMs, timings.boundMs - elapsed)));
  }
}

/** The at-rest wait after opening a page (`open`) or after an action, starting with the given fixed wait (AT_REST). */
export function atRestTimings(after: "open" | "action", fixedWaitMs: number): SettleTimings {
  return {
    minWaitMs: fixedWaitMs,
    quietWindowMs: AT_REST.quietWindowMs,
    pollIntervalMs: AT_REST.pollIntervalMs,
    boundMs: after === "open" ? AT_REST.initialBoundMs : AT_REST.actionBoundMs,
  };
}
