/**
 * One recording session: open the site in a fresh Chromium context, play the script
 * with a person's pacing while the screen is captured, take the checkpoints at the
 * evaluator's settle times, and leave video, checkpoints, assets and the page source
 * in a working folder. Turning that into a task (sheets, reference, task line,
 * installing it) is `record-task.ts`'s job.
 */
import fs from "node:fs";
import path from "node:path";
import type { BrowserContext, Page } from "playwright";
import { type Determinism, installDeterminism } from "../browser/determinism.ts";
import { sharedBrowser } from "../browser/launch.ts";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { encodeFramesToMp4 } from "../media/encode.ts";
import { PROTOCOL } from "../protocol.ts";
import type { Resolution } from "../tasks/inputs.ts";
import { AssetCollector, type RecordedAsset } from "./assets.ts";
import { CURSOR_INIT_SCRIPT, setCursorHidden } from "./cursor.ts";
import { DisplayedImages } from "./displayed-images.ts";
import { type PointerState, performAction, type RecorderPacing } from "./perform.ts";
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
  /** Working folder: receives video.mp4, checkpoints/, assets/ and the site's files in reference/. */
  readonly outDir: string;
  /** Seeded Math.random and clock start: the recording always runs in deterministic mode. */
  readonly determinism: Determinism;
}

export interface SessionResult {
  readonly checkpointCount: number;
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
  await installDeterminism(context, determinism);
  return context;
}

async function takeCheckpoint(page: Page, screencast: Screencast, file: string): Promise<void> {
  // The cursor dot is ours, not the page's: it must not be in a reference image.
  screencast.suppress(true);
  try {
    await setCursorHidden(page, true);
    await page.screenshot({ path: file, timeout: PROTOCOL.actionTimeoutMs });
    await setCursorHidden(page, false);
    // One painted frame with the cursor back before video frames are kept again.
    await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => resolve())));
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

export async function runRecordingSession(input: SessionInput): Promise<SessionResult> {
  const warnings: string[] = [];
  const checkpointsDir = path.join(input.outDir, "checkpoints");
  const framesDir = path.join(input.outDir, ".frames");
  fs.mkdirSync(checkpointsDir, { recursive: true });
  const blocked: BlockedRequests = { urls: new Set() };
  const context = await newRecordingContext(input.resolution, input.determinism, warnings, new URL(input.entryUrl).origin, blocked);
  try {
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
    const screencast = await startScreencast(context, page, framesDir, input.resolution);
    let stopped = false;
    try {
      await openEntry(page, input.entryUrl);
      await page.waitForTimeout(PROTOCOL.initialSettleMs);
      await displayed.sample(page);
      let checkpoint = 0;
      await takeCheckpoint(page, screencast, path.join(checkpointsDir, `step_${checkpoint}.png`));
      const pointer: PointerState = { x: 0, y: 0 };
      const actionsStarted = Date.now();
      for (const [index, action] of input.actions.entries()) {
        const stepStarted = Date.now();
        await performAction(page, action, index + 1, pointer, input.pacing);
        const performedMs = Date.now() - stepStarted;
        if (action.visual) {
          await page.waitForTimeout(PROTOCOL.actionSettleMs);
          checkpoint += 1;
          const shotStarted = Date.now();
          await takeCheckpoint(page, screencast, path.join(checkpointsDir, `step_${checkpoint}.png`));
          logger.debug(`step ${index + 1}: checkpoint step_${checkpoint} took ${Date.now() - shotStarted} ms`);
          await page.waitForTimeout(Math.max(0, input.pacing.pauseAfterMs - PROTOCOL.actionSettleMs));
        } else {
          await page.waitForTimeout(input.pacing.pauseAfterMs);
        }
        await displayed.sample(page);
        logger.debug(`step ${index + 1} ${action.type}: performed in ${performedMs} ms, ${Date.now() - stepStarted} ms with pauses`);
      }
      const actionsMs = Date.now() - actionsStarted;
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
        checkpointCount: checkpoint + 1,
        assets,
        sheet,
        notShown,
        captured,
        failedOnSite,
        blockedOnSite: [...blocked.urls],
        videoSec: video.durationSec,
        frameCount: recording.frames.length,
        warnings,
        actionsMs,
      };
    } finally {
      if (!stopped) await screencast.stop().catch(() => undefined);
      fs.rmSync(framesDir, { recursive: true, force: true });
    }
  } finally {
    await context.close().catch(() => undefined);
  }
}
