/**
 * The preflight: one quick load of the site, before anything is recorded, in the same
 * pinned and deterministic context the recording uses. It answers two questions in a
 * few seconds instead of after a whole recording: which of the site's own files fail
 * to load (each a warning naming its URL), and whether its first screen shows any
 * image — the benchmark's tasks come with their page's images, so a site that shows
 * none is refused unless the script allows it (`allow_no_images: true`, then the task's
 * assets are whatever the recording shows, possibly none). It also waits for the opened
 * page to come to rest, as the recording will. A page that never does, still moving with
 * nothing left to load, is opened once more under the stepped clock
 * (src/browser/stepped-clock.ts): if that brings it to rest (its motion was its scripts'),
 * it is recorded so; if not (an endless CSS animation, a video), the stepped clock would
 * not help, and the recording keeps the shifted clock.
 */

import type { Determinism } from "../browser/determinism.ts";
import { RequestsInFlight, type SettleRecord } from "../browser/settle.ts";
import { keepsMovingOnItsOwn, SteppedClock } from "../browser/stepped-clock.ts";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import type { Resolution } from "../tasks/inputs.ts";
import { DisplayedImages } from "./displayed-images.ts";
import { newRecordingContext, openEntry, settleAtRest } from "./session.ts";
import { SiteCapture } from "./site-capture.ts";

const logger = log("recorder");

export interface PreflightResult {
  /** Images on the first screen. */
  readonly imagesShown: number;
  /** "the site failed to load <url> (HTTP 404)" for each of the site's own files that failed. */
  readonly failures: readonly string[];
  /** The wait after opening, under the shifted clock. */
  readonly settle: SettleRecord;
  /** When that wait found the page moving on its own: the same wait under the stepped clock. */
  readonly steppedSettle?: SettleRecord;
  readonly ms: number;
}

export async function preflightSite(entryUrl: string, resolution: Resolution, determinism: Determinism): Promise<PreflightResult> {
  const started = Date.now();
  const origin = new URL(entryUrl).origin;
  const first = await firstLook(entryUrl, resolution, determinism);
  // After the first page is closed, so its animation takes no CPU from the second look's timed steps.
  let steppedSettle: SettleRecord | undefined;
  if (keepsMovingOnItsOwn(first.settle)) {
    try {
      steppedSettle = await steppedLook(entryUrl, resolution, determinism);
    } catch (error) {
      // Without the second look the recording keeps the shifted clock (recordingClock says so).
      logger.warn(`the preflight could not open ${origin} under the stepped clock: ${errorMessage(error).split("\n")[0]}`);
    }
  }
  return { ...first, ...(steppedSettle ? { steppedSettle } : {}), ms: Date.now() - started };
}

/** The site opened as the recording will open it: its failed files, the images on its first screen, the wait for rest. */
async function firstLook(entryUrl: string, resolution: Resolution, determinism: Determinism): Promise<Omit<PreflightResult, "ms">> {
  const origin = new URL(entryUrl).origin;
  const context = await newRecordingContext(resolution, determinism, [], origin);
  try {
    const page = await context.newPage();
    const capture = new SiteCapture(origin);
    capture.attach(page);
    const requests = new RequestsInFlight(page);
    try {
      await openEntry(page, entryUrl);
      const settle = await settleAtRest(page, requests, "open", undefined);
      const displayed = new DisplayedImages(origin);
      await displayed.sample(page);
      return { imagesShown: displayed.count, failures: capture.failures(), settle };
    } finally {
      requests.dispose();
    }
  } finally {
    await context.close().catch(() => undefined);
  }
}

/** The wait for rest after opening under the stepped clock, as the recording would wait: the fixed wait as clock steps, then paused. */
async function steppedLook(entryUrl: string, resolution: Resolution, determinism: Determinism): Promise<SettleRecord> {
  const context = await newRecordingContext(resolution, determinism, [], new URL(entryUrl).origin, undefined, "stepped");
  try {
    const page = await context.newPage();
    const requests = new RequestsInFlight(page);
    try {
      await openEntry(page, entryUrl);
      return await settleAtRest(page, requests, "open", new SteppedClock(page));
    } finally {
      requests.dispose();
    }
  } finally {
    await context.close().catch(() => undefined);
  }
}

/** The refusal of a site whose first screen shows no image, unless the script allows it. */
export function requireImagesShown(result: PreflightResult, entryUrl: string, allowNoImages: boolean): void {
  if (result.imagesShown > 0 || allowNoImages) return;
  throw new IwrError(
    "RECORDER",
    `the site at ${entryUrl} shows no image on its first screen (preflight, ${result.ms} ms): a benchmark task comes with its page's images. ` +
      `Record it anyway with allow_no_images: true in the action script (or --allow-no-images): ` +
      `its assets are then the images the recording shows, possibly none`,
    { url: entryUrl },
  );
}
