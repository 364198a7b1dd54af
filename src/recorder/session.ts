/**
 * One recording session: open the site in a fresh Chromium context, play the script
 * with a person's pacing while the screen is captured, take the checkpoints and the
 * state after every action once the page is at rest (AT_REST, src/browser/settle.ts),
 * note where a key's focus was, and leave video, checkpoints, states, assets and the
 * page source in a working folder. Turning that into a task (sheets, reference, task line,
 * installing it) is `record-task.ts`'s job.
 */
import fs from "node:fs";
import path from "node:path";
import type { BrowserContext, Page } from "playwright";
import { type Determinism, installDeterminism } from "../browser/determinism.ts";
import { sharedBrowser } from "../browser/launch.ts";
import { atRestTimings, pageSettleProbe, RequestsInFlight, type SettleRecord, waitUntilAtRest } from "../browser/settle.ts";
import { type PageClock, SteppedClock, type SteppedClockPlan } from "../browser/stepped-clock.ts";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { encodeFramesToMp4 } from "../media/encode.ts";
import { PROTOCOL } from "../protocol.ts";
import type { Resolution } from "../tasks/inputs.ts";
import { actionStateFileName, checkpointFileName, TASK_FILES } from "../tasks/layout.ts";
import { AssetCollector, type RecordedAsset } from "./assets.ts";
import { CURSOR_INIT_SCRIPT, setCursorHidden } from "./cursor.ts";
import { DisplayedImages } from "./displayed-images.ts";
import { collectLateTimerChanges, LATE_TIMER_WATCH_SCRIPT, type LateTimerChanges, mergeLateTimerChanges, notePicture } from "./late-timers.ts";
import { type PointerState, type PressNote, performAction, type RecorderPacing } from "./perform.ts";
import { sameOriginMediaUrls } from "./reference.ts";
import { type Screencast, startScreencast } from "./screencast.ts";
import type { ScriptAction } from "./script-schema.ts";
import { type SheetSources, sheetSourcesFor } from "./sheet-sources.ts";
import { type CapturedFile, SiteCapture } from "./site-capture.ts";

const logger = log("recorder");

export interface SessionInput {
  /** The page to open (served from 127.0.0.1). */
  readonly entryUrl: string;
  /** The page's own source, for finding assets it references but never loaded. */
  readonly source: string;
  readonly actions: readonly ScriptAction[];
  readonly resolution: Resolution;
  readonly pacing: RecorderPacing;
  readonly ffmpegPath: string;
  readonly videoFps: number;
  /** Working folder: receives video.mp4, checkpoints/, states/, assets/ and the site's files in reference/. */
  readonly outDir: string;
  /** Seeded Math.random and clock start: the recording always runs in deterministic mode. */
  readonly determinism: Determinism;
  /** "stepped" for a page that never comes to rest or changes itself across pictures (src/browser/stepped-clock.ts); default "shifted". */
  readonly clock?: PageClock;
}

/** How long each reference picture waited for the page to be at rest. */
export interface SessionSettles {
  /** Before step_0 (the page opened). */
  readonly initial: SettleRecord;
  /** After action i + 1, before states/action_<i + 1>.png (and its checkpoint when flagged). */
  readonly afterActions: readonly SettleRecord[];
}

export interface SessionResult {
  readonly checkpointCount: number;
  readonly settles: SessionSettles;
  /** By action index: what was seen of a Press's key (undefined for other actions). */
  readonly presses: ReadonlyArray<PressNote | undefined>;
  /** The images and videos the page showed, in first-request order. */
  readonly assets: RecordedAsset[];
  /** What each asset's sheet tile is drawn from (converted where sharp cannot decode it). */
  readonly sheet: SheetSources;
  /** Media the page loaded or its source names that were never on screen: not assets, listed in recording.json. */
  readonly notShown: string[];
  /** The site's files kept beside the reference page (reference/), the entry document aside. */
  readonly captured: CapturedFile[];
  /** Snapshot paths of the site's own files that failed while recording (each also a warning). */
  readonly failedOnSite: string[];
  /** Requests refused while recording (other origins), by blockedRequestKey: the reference may not reach them either. */
  readonly blockedOnSite: string[];
  readonly videoSec: number;
  readonly frameCount: number;
  readonly warnings: string[];
  /** Wall time of the scripted part (first action to last pause), for seconds per action. */
  readonly actionsMs: number;
  /** Under the stepped clock: how far it went between the pictures, for the task line. */
  readonly steppedClock?: SteppedClockPlan;
  /** Under the shifted clock: the page's changes on timers set before a picture (late-timers.ts). */
  readonly lateTimerChanges: readonly LateTimerChanges[];
}

/** A recording context's view of the network: the requests it refused, by blockedRequestKey. */
export interface BlockedRequests {
  readonly urls: Set<string>;
}

const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * How a refused request is known across the recording and the reference check: by
 * origin and path, except that any port or name of this machine counts as one ("this
 * machine"), because the check serves the reference on a port of its own and a page
 * that builds URLs from `location` asks it for the same path on another port.
 */
export function blockedRequestKey(url: URL): string {
  return `${LOCAL_HOSTS.has(url.hostname) ? "this machine" : url.origin}${url.pathname}`;
}

/**
 * A pinned, deterministic context that reaches nothing but `siteOrigin`: every other
 * origin — another host, or another port or name of this machine — is refused and
 * warned about once, since the reference page, served from one origin, could not
 * reach it either.
 */
export async function newRecordingContext(
  resolution: Resolution,
  determinism: Determinism,
  warnings: string[],
  siteOrigin: string,
  blocked?: BlockedRequests,
  clock: PageClock = "shifted",
): Promise<BrowserContext> {
  const browser = await sharedBrowser();
  // Everything that could differ between two recordings of the same site is pinned.
  const context = await browser.newContext({
    viewport: resolution,
    deviceScaleFactor: 1,
    locale: "en-US",
    timezoneId: "UTC",
    colorScheme: "light",
    serviceWorkers: "block",
  });
  const warnedOrigins = new Set<string>();
  await context.route("**/*", async (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === "http:" || url.protocol === "https:") && url.origin !== siteOrigin) {
      if (!warnedOrigins.has(url.origin)) {
        warnedOrigins.add(url.origin);
        warnings.push(`blocked a request to ${url.origin} (only the site's own origin, ${siteOrigin}, is recorded)`);
      }
      blocked?.urls.add(blockedRequestKey(url));
      await route.abort("blockedbyclient");
      return;
    }
    await route.continue();
  });
  await context.addInitScript(CURSOR_INIT_SCRIPT);
  await installDeterminism(context, determinism, clock);
  return context;
}

/** Real time for the compositor to paint the cursor back when the page's frames wait for the stepped clock. */
const CURSOR_REPAINT_MS = 50;

/** The page as a reference picture (checkpoint or state): the viewport without our cursor. */
async function takeReferencePicture(page: Page, screencast: Screencast, clock: SteppedClock | undefined): Promise<Buffer> {
  // The cursor dot is ours, not the page's: it must not be in a reference image.
  screencast.suppress(true);
  try {
    await setCursorHidden(page, true);
    const png = await page.screenshot({ timeout: PROTOCOL.actionTimeoutMs });
    await setCursorHidden(page, false);
    // One painted frame with the cursor back before video frames are kept again (the
    // page's own requestAnimationFrame waits for the stepped clock: a real frame's time instead).
    if (clock) await page.waitForTimeout(CURSOR_REPAINT_MS);
    else await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => resolve())));
    return png;
  } finally {
    screencast.suppress(false);
  }
}

export async function openEntry(page: Page, entryUrl: string): Promise<void> {
  let status: number | undefined;
  try {
    const response = await page.goto(entryUrl, { waitUntil: "load", timeout: PROTOCOL.actionTimeoutMs });
    status = response?.status();
  } catch (error) {
    throw new IwrError("RECORDER", `the site failed to load from ${entryUrl}: ${errorMessage(error).split("\n")[0]}`, { url: entryUrl });
  }
  if (status !== undefined && status >= 400) {
    throw new IwrError("RECORDER", `the site failed to load: ${entryUrl} answered HTTP ${status}`, { url: entryUrl, status });
  }
}

interface PlayedScript {
  readonly checkpointCount: number;
  readonly settles: SessionSettles;
  readonly presses: Array<PressNote | undefined>;
  /** Wall time from the first action to the last pause. */
  readonly actionsMs: number;
  readonly steppedClock?: SteppedClockPlan;
  readonly lateTimerChanges: readonly LateTimerChanges[];
}

/**
 * Waits until the page is at rest: at least the protocol's fixed wait, then within
 * AT_REST's bound. Under the stepped clock the fixed wait is the clock advancing that far
 * (the page's scripts run through it), and the wait for rest follows with the clock paused.
 */
export async function settleAtRest(page: Page, requests: RequestsInFlight, after: "open" | "action", clock: SteppedClock | undefined): Promise<SettleRecord> {
  const fixedMs = after === "open" ? PROTOCOL.initialSettleMs : PROTOCOL.actionSettleMs;
  if (clock) await clock.advance(fixedMs);
  return waitUntilAtRest(pageSettleProbe(page, requests, PROTOCOL.actionTimeoutMs), atRestTimings(after, clock ? 0 : fixedMs));
}

/**
 * The scripted part: step_0 once the opened page is at rest, then each action, the page
 * at rest again, its state (states/action_<i>.png) and, when flagged, the same picture as
 * the next checkpoint; the rest of the "after" pause keeps the state on video.
 */
async function playScript(
  page: Page,
  screencast: Screencast,
  displayed: DisplayedImages,
  requests: RequestsInFlight,
  input: SessionInput,
  warnings: string[],
): Promise<PlayedScript> {
  const checkpointsDir = path.join(input.outDir, TASK_FILES.checkpointsDir);
  const statesDir = path.join(input.outDir, TASK_FILES.statesDir);
  fs.mkdirSync(checkpointsDir, { recursive: true });
  fs.mkdirSync(statesDir, { recursive: true });
  const clock = input.clock === "stepped" ? new SteppedClock(page) : undefined;
  // Real time under the shifted clock; under the stepped clock the page's time advancing as far.
  const pause = (ms: number): Promise<unknown> => (clock ? clock.advance(ms) : page.waitForTimeout(ms));
  const initial = await settleAtRest(page, requests, "open", clock);
  logSettle("the opened page", initial);
  const openMs = clock?.advancedMs ?? 0;
  const beforeActionMs: number[] = [];
  const afterActionMs: number[] = [];
  await displayed.sample(page);
  let checkpoint = 0;
  const lateTimerChanges: LateTimerChanges[] = await notePicture(page);
  fs.writeFileSync(path.join(checkpointsDir, checkpointFileName(checkpoint)), await takeReferencePicture(page, screencast, clock));
  /** The page's time at the latest picture: what the clock advanced since then belongs to the next action's "before". */
  let pictureAt = openMs;
  const pointer: PointerState = { x: 0, y: 0 };
  const afterActions: SettleRecord[] = [];
  const presses: Array<PressNote | undefined> = [];
  const actionsStarted = Date.now();
  for (const [index, action] of input.actions.entries()) {
    const stepStarted = Date.now();
    // Collected before the action, which may leave the document (and its watch with it).
    lateTimerChanges.push(...(await collectLateTimerChanges(page)));
    const press = await performAction(page, action, index + 1, pointer, input.pacing, pause, clock !== undefined);
    const actionAt = clock?.advancedMs ?? 0;
    beforeActionMs.push(actionAt - pictureAt);
    presses.push(press);
    if (press?.reachedPage === false) {
      warnings.push(
        `step ${index + 1}: the key '${action.type === "Press" ? action.key : ""}' reached no listener of the page's document ` +
          `(focus: ${press.focus.on}${press.documentHasFocus ? "" : ", the page had no focus"})`,
      );
    }
    const performedMs = Date.now() - stepStarted;
    const settled = await settleAtRest(page, requests, "action", clock);
    afterActionMs.push((clock?.advancedMs ?? 0) - actionAt);
    afterActions.push(settled);
    logSettle(`step ${index + 1}`, settled);
    lateTimerChanges.push(...(await notePicture(page)));
    const picture = await takeReferencePicture(page, screencast, clock);
    pictureAt = clock?.advancedMs ?? 0;
    fs.writeFileSync(path.join(statesDir, actionStateFileName(index + 1)), picture);
    if (action.visual) {
      checkpoint += 1;
      fs.writeFileSync(path.join(checkpointsDir, checkpointFileName(checkpoint)), picture);
    }
    // The rest of the "after" pause; under the stepped clock counted in page time, so every recording of the page advances alike.
    const afterSoFarMs = clock ? (afterActionMs[index] ?? 0) : Date.now() - stepStarted - performedMs;
    await pause(Math.max(0, input.pacing.pauseAfterMs - afterSoFarMs));
    await displayed.sample(page);
    logger.debug(`step ${index + 1} ${action.type}: performed in ${performedMs} ms, ${Date.now() - stepStarted} ms with pauses`);
  }
  return {
    checkpointCount: checkpoint + 1,
    settles: { initial, afterActions },
    presses,
    actionsMs: Date.now() - actionsStarted,
    lateTimerChanges: mergeLateTimerChanges(lateTimerChanges),
    ...(clock ? { steppedClock: { openMs, beforeActionMs, afterActionMs } } : {}),
  };
}

function logSettle(what: string, settle: SettleRecord): void {
  if (settle.atRest) logger.debug(`${what}: at rest after ${settle.waitedMs} ms`);
  else logger.info(`${what}: not at rest after ${settle.waitedMs} ms (${settle.stillGoing.join("; ")}); captured at the bound`);
}

export async function runRecordingSession(input: SessionInput): Promise<SessionResult> {
  const warnings: string[] = [];
  const framesDir = path.join(input.outDir, ".frames");
  const blocked: BlockedRequests = { urls: new Set() };
  const context = await newRecordingContext(input.resolution, input.determinism, warnings, new URL(input.entryUrl).origin, blocked, input.clock);
  try {
    // Under the real clock, watch for changes whose timing the replay would not keep (late-timers.ts).
    if (input.clock !== "stepped") await context.addInitScript(LATE_TIMER_WATCH_SCRIPT);
    const page = await context.newPage();
    page.on("pageerror", (error) => warnings.push(`page error: ${error.message}`));
    page.on("dialog", (dialog) => {
      warnings.push(`dialog (${dialog.type()}) dismissed: ${dialog.message()}`);
      void dialog.dismiss().catch(() => undefined);
    });
    const collector = new AssetCollector();
    collector.attach(page);
    const capture = new SiteCapture(new URL(input.entryUrl).origin);
    capture.attach(page);
    const displayed = new DisplayedImages(new URL(input.entryUrl).origin);
    // Followed from the first request, so a checkpoint waits for what the page still loads.
    const requests = new RequestsInFlight(page);
    const screencast = await startScreencast(context, page, framesDir, input.resolution);
    let stopped = false;
    try {
      await openEntry(page, input.entryUrl);
      const played = await playScript(page, screencast, displayed, requests, input, warnings);
      requests.dispose();
      const recording = await screencast.stop();
      stopped = true;
      const video = await encodeFramesToMp4(recording.frames, {
        ffmpegPath: input.ffmpegPath,
        outFile: path.join(input.outDir, "video.mp4"),
        endSec: recording.endSec,
        width: input.resolution.width,
        height: input.resolution.height,
        fps: input.videoFps,
      });
      // Media the source names but the interaction never loaded: not assets either, but worth listing.
      // The entry's URL, not the page's last one: a script may have navigated to another page of the site.
      const namedOnly = sameOriginMediaUrls(input.source, input.entryUrl).filter((url) => !collector.urls.includes(url));
      const assets = await collector.save(context.request, path.join(input.outDir, "assets"), (url, sha256) => displayed.has(url, sha256));
      const assetUrls = new Set(assets.flatMap((asset) => asset.urls));
      const notShown = [...collector.urls.filter((url) => !assetUrls.has(url)), ...namedOnly];
      warnings.push(...capture.failures());
      const captured = await capture.save(context.request, path.join(input.outDir, "reference"), input.entryUrl, namedOnly);
      const sheet = await sheetSourcesFor(assets, context, input.outDir);
      for (const name of sheet.unreadable) warnings.push(`asset ${name} cannot be decoded by sharp or Chromium; its sheet tile says "unreadable image"`);
      const failedOnSite = capture.failedFiles().map((file) => file.path);
      return {
        checkpointCount: played.checkpointCount,
        settles: played.settles,
        presses: played.presses,
        assets,
        sheet,
        notShown,
        captured,
        failedOnSite,
        blockedOnSite: [...blocked.urls],
        videoSec: video.durationSec,
        frameCount: recording.frames.length,
        warnings,
        actionsMs: played.actionsMs,
        lateTimerChanges: played.lateTimerChanges,
        ...(played.steppedClock ? { steppedClock: played.steppedClock } : {}),
      };
    } finally {
      requests.dispose();
      if (!stopped) await screencast.stop().catch(() => undefined);
      fs.rmSync(framesDir, { recursive: true, force: true });
    }
  } finally {
    await context.close().catch(() => undefined);
  }
}
