/**
 * `recordTask`: a site + an action script → one complete task in the benchmark's
 * layout (docs/protocol.md §1) plus `reference/index.html`, and its line in the jsonl.
 *
 * Nothing half-done is ever left behind: everything is written into a hidden working
 * folder beside the target, moved into place in one rename at the end, and the jsonl
 * line is written last. Any failure removes the working folder and leaves the jsonl
 * and an existing task untouched.
 */
import fs from "node:fs";
import path from "node:path";
import { DEFAULT_CLOCK_START_MS, DEFAULT_RANDOM_SEED, type Determinism, determinismLineField } from "../browser/determinism.ts";
import { type StaticServer, startStaticServer } from "../browser/static-server.ts";
import type { PageClock } from "../browser/stepped-clock.ts";
import { IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { buildContactSheets, type ContactSheetAsset } from "../media/contact-sheet.ts";
import { findChromium, findFfmpeg } from "../setup/find-tools.ts";
import { parseResolution, ResolutionString, type TaskLine } from "../tasks/schema.ts";
import { nextFreeTaskId, readTaskIds } from "../tasks/writer.ts";
import { assetNameByUrl, type RecordedAsset } from "./assets.ts";
import { DEFAULT_PACING, type RecorderPacing } from "./perform.ts";
import { preflightSite, requireImagesShown } from "./preflight.ts";
import { recordingClock, recordUnderChosenClock, setAsideFolder } from "./recording-clock.ts";
import { writeRecordingNotes } from "./recording-notes.ts";
import { rewriteAssetUrls } from "./reference.ts";
import { requireReferenceLoads } from "./reference-check.ts";
import { type LoadedActionScript, loadActionScript } from "./script-schema.ts";
import type { SessionSettles } from "./session.ts";
import { type CapturedFile, shownUrl, snapshotPath } from "./site-capture.ts";
import { installTask, makeWorkingFolder, prepareTaskSetFolder, taskFolderFor } from "./task-folders.ts";
import { buildTaskLine } from "./task-line.ts";

const logger = log("recorder");

export interface RecordTaskOptions {
  /** The action script: a YAML path or an already loaded script. */
  readonly script: string | LoadedActionScript;
  /** Site folder (holding index.html) or a 127.0.0.1 URL; overrides the script's `site`. */
  readonly site?: string;
  /** `<name>.jsonl`; the task folder goes to `<name>/<id>/`. */
  readonly data: string;
  /** Default: the next free id in the jsonl. */
  readonly id?: number;
  /** "WIDTHxHEIGHT"; overrides the script's resolution. */
  readonly resolution?: string;
  /** Replace an existing task with the same id. */
  readonly force?: boolean;
  readonly pacing?: Partial<RecorderPacing>;
  /** Constant frame rate of video.mp4 (default 10). */
  readonly videoFps?: number;
  /** Seed of the page's Math.random; overrides the script's `seed` (default DEFAULT_RANDOM_SEED). */
  readonly seed?: number;
  /** Record even when the first screen shows no image; overrides the script's `allow_no_images`. */
  readonly allowNoImages?: boolean;
  /**
   * The page's clock: "auto" (default) is the stepped clock for a page the preflight saw
   * never come to rest (src/browser/stepped-clock.ts) or one whose timers changed it across
   * pictures (late-timers.ts), the shifted real clock otherwise.
   */
  readonly clock?: "auto" | PageClock;
}

export interface RecordedTask {
  readonly id: number;
  readonly dir: string;
  readonly line: TaskLine;
  readonly assets: readonly Pick<RecordedAsset, "name" | "urls" | "bytes">[];
  /** The site's files kept beside the reference page. */
  readonly captured: readonly CapturedFile[];
  /** Media loaded or named by the source but never on screen (not assets). */
  readonly notShown: readonly string[];
  readonly determinism: Determinism;
  readonly checkpointCount: number;
  /** How long each reference picture (step_0, then the state after each action) waited for the page to be at rest. */
  readonly settles: SessionSettles;
  readonly sheetCount: number;
  readonly videoSec: number;
  readonly warnings: readonly string[];
  readonly timings: { readonly totalMs: number; readonly actionsMs: number; readonly msPerAction: number };
}

interface ResolvedSite {
  readonly entryUrl: string;
  readonly source: string;
  readonly server?: StaticServer;
}

function isUrl(site: string): boolean {
  return /^https?:\/\//i.test(site);
}

async function openSite(site: string): Promise<ResolvedSite> {
  if (isUrl(site)) {
    const url = new URL(site);
    if (!["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) {
      throw new IwrError("CONFIG_INVALID", `--site ${site}: only sites served from 127.0.0.1 can be recorded (no network access here)`, { site });
    }
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw new IwrError("RECORDER", `the site failed to load from ${site}: ${error instanceof Error ? error.message : String(error)}`, { site });
    }
    if (!response.ok) throw new IwrError("RECORDER", `the site failed to load: ${site} answered HTTP ${response.status}`, { site });
    return { entryUrl: url.href, source: await response.text() };
  }
  const indexFile = path.join(site, "index.html");
  let source: string;
  try {
    source = fs.readFileSync(indexFile, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new IwrError("RECORDER", `the site failed to load: cannot read ${indexFile} (${code ?? String(error)}); --site must be a folder holding index.html`, {
      site,
    });
  }
  const server = await startStaticServer(site);
  return { entryUrl: server.url("index.html"), source, server };
}

/**
 * The reference page is served at "/" like any candidate, so the page must sit at its
 * site's root: the site's files keep their paths relative to it.
 */
function requireEntryAtSiteRoot(entryUrl: string): void {
  if (!snapshotPath(entryUrl).includes("/")) return;
  throw new IwrError(
    "RECORDER",
    `--site ${entryUrl}: the page must be at the root of its server (e.g. http://127.0.0.1:8080/ or /index.html); serve its folder as the root`,
    { site: entryUrl },
  );
}

function requireFfmpegPath(): string {
  const ffmpeg = findFfmpeg();
  if (!ffmpeg) {
    throw new IwrError(
      "SETUP_MISSING",
      `ffmpeg not found${process.env.IWR_FFMPEG ? ` (IWR_FFMPEG=${process.env.IWR_FFMPEG} is not an executable)` : ""}` +
        ": run `npx iwr setup` or set IWR_FFMPEG",
    );
  }
  if (!findChromium()) throw new IwrError("SETUP_MISSING", "Chromium not found: run `npx iwr setup` or set IWR_CHROMIUM");
  return ffmpeg.path;
}

async function writeSheets(assets: readonly ContactSheetAsset[], dir: string): Promise<number> {
  const sheets = await buildContactSheets(assets);
  fs.mkdirSync(dir, { recursive: true });
  for (const [index, png] of sheets.entries()) fs.writeFileSync(path.join(dir, `stitched_image_${index + 1}.png`), png);
  return sheets.length;
}

/** Everything decided before the browser starts. */
interface RecordingPlan {
  readonly options: RecordTaskOptions;
  readonly loaded: LoadedActionScript;
  readonly site: string;
  readonly resolutionText: string;
  readonly ffmpegPath: string;
  readonly jsonl: string;
  readonly nameDir: string;
  readonly started: number;
}

export async function recordTask(options: RecordTaskOptions): Promise<RecordedTask> {
  const started = Date.now();
  const loaded = typeof options.script === "string" ? loadActionScript(options.script) : options.script;
  const site = options.site ?? loaded.siteDir;
  if (!site) throw new IwrError("CONFIG_INVALID", `${loaded.file}: no site: give --site or a site: field in the script`, { file: loaded.file });
  const resolutionText = options.resolution ?? loaded.script.resolution;
  if (!ResolutionString.safeParse(resolutionText).success) {
    throw new IwrError("CONFIG_INVALID", `--resolution: expected WIDTHxHEIGHT (e.g. 1280x720), got '${resolutionText}'`);
  }
  const ffmpegPath = requireFfmpegPath();
  const jsonl = path.resolve(options.data);
  const nameDir = taskFolderFor(jsonl);
  const createdNameDir = prepareTaskSetFolder(nameDir);
  try {
    return await recordInto({ options, loaded, site, resolutionText, ffmpegPath, jsonl, nameDir, started });
  } catch (error) {
    // A first recording that failed leaves no empty <name>/ behind either.
    if (createdNameDir && fs.readdirSync(nameDir).length === 0) fs.rmdirSync(nameDir);
    throw error;
  }
}

async function recordInto(plan: RecordingPlan): Promise<RecordedTask> {
  const { options, loaded, site, resolutionText, ffmpegPath, jsonl, nameDir, started } = plan;
  const { script } = loaded;
  const resolution = parseResolution(resolutionText);
  const ids = readTaskIds(jsonl);
  const id = options.id ?? nextFreeTaskId(jsonl);
  const targetDir = path.join(nameDir, String(id));
  if (!options.force && ids.includes(id)) {
    throw new IwrError("CONFIG_INVALID", `task id ${id} already exists in ${jsonl}; pass --force to re-record it`, { id });
  }
  if (!options.force && fs.existsSync(targetDir)) {
    throw new IwrError("CONFIG_INVALID", `${targetDir} already exists (not listed in ${path.basename(jsonl)}); remove it or pass --force`, { id });
  }

  const determinism: Determinism = {
    randomSeed: options.seed ?? script.seed ?? DEFAULT_RANDOM_SEED,
    clockStartMs: script.clock_start ? Date.parse(script.clock_start) : DEFAULT_CLOCK_START_MS,
  };
  const allowNoImages = options.allowNoImages ?? script.allow_no_images;
  const workDir = makeWorkingFolder(nameDir, id);
  const opened = await openSite(isUrl(site) ? site : path.resolve(site)).catch((error: unknown) => {
    fs.rmSync(workDir, { recursive: true, force: true });
    throw error;
  });
  try {
    requireEntryAtSiteRoot(opened.entryUrl);
    // Before the recording: a site that would be refused is refused in seconds, and its missing files are named.
    const preflight = await preflightSite(opened.entryUrl, resolution, determinism);
    requireImagesShown(preflight, opened.entryUrl, allowNoImages);
    const askedClock = options.clock ?? "auto";
    const chosen = recordingClock(askedClock, preflight.settle, preflight.steppedSettle);
    const {
      session,
      clock,
      warning: clockWarning,
    } = await recordUnderChosenClock(
      {
        entryUrl: opened.entryUrl,
        source: opened.source,
        actions: script.actions,
        resolution,
        pacing: { ...DEFAULT_PACING, ...options.pacing },
        ffmpegPath,
        videoFps: options.videoFps ?? 10,
        outDir: workDir,
        determinism,
      },
      askedClock,
      chosen,
    );
    if (clock.clock === "stepped") logger.info(`task ${id}: recorded under the stepped clock (${clock.why})`);
    if (session.assets.length === 0 && !allowNoImages) {
      throw new IwrError(
        "RECORDER",
        `the page at ${opened.entryUrl} showed no image during the recording: a task needs its page's images (allow_no_images: true records it with none)`,
      );
    }
    const sheetCount = await writeSheets(session.sheet.assets, path.join(workDir, "stitched_assets"));
    fs.rmSync(path.join(workDir, ".sheet-tiles"), { recursive: true, force: true });
    const referenceDir = path.join(workDir, "reference");
    const reference = rewriteAssetUrls(opened.source, opened.entryUrl, assetNameByUrl(session.assets));
    fs.mkdirSync(referenceDir, { recursive: true });
    fs.writeFileSync(path.join(referenceDir, "index.html"), reference.html);
    const recorded: Determinism = session.steppedClock ? { ...determinism, steppedClock: session.steppedClock } : determinism;
    await requireReferenceLoads(
      workDir,
      referenceDir,
      path.join(workDir, "assets"),
      resolution,
      recorded,
      new Set(session.failedOnSite),
      new Set(session.blockedOnSite),
    );
    const warnings = [
      ...new Set([...preflight.failures, ...session.warnings]),
      ...session.sheet.converted.map((converted) => `asset ${converted}`),
      ...(clockWarning ? [clockWarning] : []),
    ];
    // Candidate post-processing removes iframes (as the harness's does), so the reference is scored without them.
    if (/<iframe\b/i.test(opened.source))
      warnings.push("the page holds an iframe, which is removed from every candidate, the reference page included: it is scored without it");
    const keyFocus = session.presses.map((press) => press?.focus);
    const line = { ...buildTaskLine(id, { ...script, resolution: resolutionText }, keyFocus), determinism: determinismLineField(recorded) };
    writeRecordingNotes(workDir, {
      site: isUrl(site) ? shownUrl(site) : path.relative(targetDir, path.resolve(site)),
      entryUrl: opened.entryUrl,
      source: script.source_website,
      determinism: recorded,
      clockWhy: clock.why,
      session,
      namedNotLoaded: reference.leftovers,
      warnings,
      preflightMs: preflight.ms,
    });
    installTask(workDir, targetDir, jsonl, line, options.force ?? false);
    for (const warning of warnings) logger.warn(`task ${id}: ${warning}`);
    const totalMs = Date.now() - started;
    logger.info(
      `recorded task ${id} into ${targetDir}: ${script.actions.length} actions, ${session.videoSec.toFixed(1)} s of video, ` +
        `${session.assets.length} assets shown, ` +
        `${session.captured.length} site files kept beside the reference, ${(totalMs / 1000).toFixed(1)} s`,
    );
    return {
      id,
      dir: targetDir,
      line,
      assets: session.assets.map(({ name, urls, bytes }) => ({ name, urls, bytes })),
      captured: session.captured,
      notShown: session.notShown,
      determinism: recorded,
      checkpointCount: session.checkpointCount,
      settles: session.settles,
      sheetCount,
      videoSec: session.videoSec,
      warnings,
      timings: { totalMs, actionsMs: session.actionsMs, msPerAction: session.actionsMs / script.actions.length },
    };
  } catch (error) {
    fs.rmSync(workDir, { recursive: true, force: true });
    fs.rmSync(setAsideFolder(workDir), { recursive: true, force: true });
    throw error;
  } finally {
    await opened.server?.close();
  }
}
