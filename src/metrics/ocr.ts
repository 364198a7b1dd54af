/**
 * §3.5 OCR: the text of a screenshot, as the space-joined list of segments an OCR
 * engine reads, and the similarity of two screenshots' texts.
 *
 * Engine: the benchmark uses easyocr (English), which has no Node port. We use
 * Tesseract (tesseract.js 7, English LSTM model `4.0.0_best_int`, offline) with page
 * segmentation mode 3: ~0.1–0.3 s a 720p screenshot after a one-off ~0.6 s start. It
 * reads body text, headings and light-on-dark text; like any global-threshold OCR it
 * can miss short white labels on saturated buttons that easyocr would read, so OCR
 * numbers are close to, not identical with, the harness's. The engine's name and
 * version are recorded with every result.
 *
 * A small pool of Tesseract workers per process (one reading is single-threaded and
 * costs 0.4–1 s of CPU on a 720p screen, so one worker makes every reading queue behind
 * the others: the judge's region crops behind the evalpoints, one task behind another).
 * The pool is started on first use, all at once, and reused; `setOcrPoolSize()` sizes it
 * before that and `shutdownOcr()` ends it. Texts are cached by the image's content hash,
 * so each reference checkpoint is read once however many candidates are compared with it;
 * reference texts are also kept on disk for later runs (reference-text-store.ts).
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createWorker, OEM, type PSM, type Worker } from "tesseract.js";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { defaultReferenceTextDir, openReferenceTextStore, type ReferenceTextStore } from "./reference-text-store.ts";
import { METRIC_SETTINGS } from "./settings.ts";
import { joinOcrSegments, textSimilarity } from "./text-similarity.ts";

export interface OcrEngineInfo {
  /** e.g. "tesseract.js" */
  name: string;
  /** e.g. "7.0.0" */
  version: string;
  /** Model/data and options that change what is read, e.g. "eng 4.0.0_best_int psm 3". */
  detail: string;
}

export interface OcrEngine {
  readonly info: OcrEngineInfo;
  /**
   * Everything that decides the text read from an image: the engine, its WASM core, the
   * language data, the options and how segments are joined. Keys both text caches.
   */
  readonly identity: string;
  /** Text segments (lines) in reading order. */
  readSegments(png: Buffer): Promise<string[]>;
  close(): Promise<void>;
}

export interface OcrComparison {
  similarity: number;
  /** Space-joined text of the reference checkpoint (not lower-cased; the similarity lower-cases). */
  checkpointText: string;
  /** Space-joined text of the candidate screenshot. */
  screenshotText: string;
}

const logger = log("evaluator");
const require = createRequire(import.meta.url);
const OCR_WORKER_SCRIPT = fileURLToPath(new URL("./ocr-worker.cjs", import.meta.url));
/** tesseract.js's own Node worker script, which OCR_WORKER_SCRIPT loads. */
const TESSERACT_WORKER_SCRIPT = "tesseract.js/src/worker-script/node/index.js";
/** Bumped when the stored form of a text changes (today: segments joined by joinOcrSegments). */
const STORED_TEXT_FORMAT = 1;

/**
 * The lower-priority wrapper when tesseract.js's worker script is where it expects it;
 * otherwise tesseract.js's default (a worker thread that cannot load would end the
 * process rather than fail the start).
 */
function workerScriptOption(): { workerPath?: string } {
  try {
    require.resolve(TESSERACT_WORKER_SCRIPT);
    return { workerPath: OCR_WORKER_SCRIPT };
  } catch {
    logger.debug(`OCR: ${TESSERACT_WORKER_SCRIPT} not found; Tesseract workers run at normal priority`);
    return {};
  }
}

function packageVersion(name: string): string {
  const manifest: unknown = require(`${name}/package.json`);
  if (typeof manifest === "object" && manifest !== null && "version" in manifest && typeof manifest.version === "string") {
    return manifest.version;
  }
  return "unknown";
}

/** Tesseract's English data folder inside @tesseract.js-data/eng, read offline. */
function tesseractLangPath(): string {
  const packageDir = path.dirname(require.resolve("@tesseract.js-data/eng/package.json"));
  return path.join(packageDir, METRIC_SETTINGS.ocr.trainedData);
}

/**
 * How Tesseract segments the picture: `page` (mode 3, automatic: a whole screen, light
 * text on dark included) for screenshots, `block` (mode 6, one uniform block) for a
 * small crop, where mode 3 sees a lone digit or word as noise and reads nothing.
 */
export type OcrLayout = "page" | "block";
const PAGE_SEG_MODES: Record<OcrLayout, string> = { page: METRIC_SETTINGS.ocr.pageSegMode, block: "6" };

async function startTesseractWorker(layout: OcrLayout): Promise<Worker> {
  const settings = METRIC_SETTINGS.ocr;
  const worker = await createWorker(settings.language, OEM.LSTM_ONLY, {
    langPath: tesseractLangPath(),
    cacheMethod: "none",
    gzip: true,
    // tesseract.js's worker script, run at a lower priority than the replay (see ocr-worker.cjs).
    ...workerScriptOption(),
    // Without a handler tesseract.js rethrows every failed job from its message loop, an
    // uncaught exception that would end the whole run; the job's own promise still rejects.
    errorHandler: (reason: unknown) => logger.debug(`tesseract job failed: ${String(reason)}`),
  });
  try {
    // A fixed resolution: screenshots carry no (or arbitrary) DPI metadata, and Tesseract's
    // guess from it would make the same pixels read differently.
    await worker.setParameters({ tessedit_pageseg_mode: PAGE_SEG_MODES[layout] as PSM, user_defined_dpi: settings.dpi });
  } catch (error) {
    await worker.terminate().catch(() => undefined);
    throw error;
  }
  return worker;
}

/** Readings wait here for the first idle worker, in the order they were asked for. */
class WorkerPool {
  private readonly idle: Worker[];
  private readonly waiting: Array<(worker: Worker) => void> = [];

  constructor(private readonly workers: readonly Worker[]) {
    this.idle = [...workers];
  }

  async run<T>(job: (worker: Worker) => Promise<T>): Promise<T> {
    const worker = this.idle.pop() ?? (await new Promise<Worker>((resolve) => this.waiting.push(resolve)));
    try {
      return await job(worker);
    } finally {
      const next = this.waiting.shift();
      if (next) next(worker);
      else this.idle.push(worker);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate().catch(() => undefined)));
  }
}

async function startTesseract(size: number, layout: OcrLayout): Promise<OcrEngine> {
  const settings = METRIC_SETTINGS.ocr;
  const starting = Array.from({ length: size }, () => startTesseractWorker(layout));
  const started = await Promise.allSettled(starting);
  const workers = started.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
  const failure = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
  if (failure) {
    await Promise.all(workers.map((worker) => worker.terminate().catch(() => undefined)));
    throw new IwrError("SETUP_MISSING", `OCR engine tesseract.js could not start: ${errorMessage(failure.reason)}`, {}, { cause: failure.reason });
  }
  const pool = new WorkerPool(workers);
  const info: OcrEngineInfo = {
    name: settings.engine,
    version: packageVersion("tesseract.js"),
    detail: `${settings.language} ${settings.trainedData} psm ${PAGE_SEG_MODES[layout]} dpi ${settings.dpi}`,
  };
  logger.debug(`OCR pool of ${size} worker(s) started`, { engine: info });
  const identity = [
    `${info.name}@${info.version}`,
    `core@${packageVersion("tesseract.js-core")}`,
    `data@${packageVersion("@tesseract.js-data/eng")}`,
    "oem lstm",
    info.detail,
    `text-format ${STORED_TEXT_FORMAT}`,
  ].join(" ");
  return {
    info,
    identity,
    async readSegments(png) {
      const result = await pool.run((worker) => worker.recognize(png));
      // Tesseract separates lines with "\n" (blocks with a blank line): one line is one segment.
      return result.data.text.split("\n");
    },
    close: () => pool.close(),
  };
}

/**
 * One more worker than evaluation workers (a task's evalpoint readings and its judge's
 * region crops come in bursts together), never more than the CPUs.
 */
export function ocrPoolSizeFor(evaluationWorkers: number): number {
  return Math.max(1, Math.min(os.availableParallelism(), Math.max(1, Math.floor(evaluationWorkers)) + 1));
}

let poolSize = ocrPoolSizeFor(1);
let sharedEngine: Promise<OcrEngine> | undefined;
/** The block-layout engine: one worker, started when a crop is first read that way. */
let blockEngine: Promise<OcrEngine> | undefined;

/** How many Tesseract workers the next pool start uses (a running pool keeps its size until shutdownOcr()). */
export function setOcrPoolSize(size: number): void {
  if (!Number.isInteger(size) || size < 1) throw new IwrError("CONFIG_INVALID", `OCR pool size: expected a positive integer, got ${size}`);
  poolSize = size;
}
const textCache = new Map<string, Promise<string>>();

/** The process's OCR engine for a layout, started on first use. A failed start is not cached: the next call retries. */
export function getOcrEngine(layout: OcrLayout = "page"): Promise<OcrEngine> {
  if (layout === "block") {
    if (!blockEngine) {
      const starting = startTesseract(1, "block");
      blockEngine = starting;
      starting.catch(() => {
        if (blockEngine === starting) blockEngine = undefined;
      });
    }
    return blockEngine;
  }
  if (!sharedEngine) {
    const starting = startTesseract(poolSize, "page");
    sharedEngine = starting;
    starting.catch(() => {
      if (sharedEngine === starting) sharedEngine = undefined;
    });
  }
  return sharedEngine;
}

/** Ends the shared OCR workers (call once at shutdown; a later OCR call starts a new one). */
export async function shutdownOcr(): Promise<void> {
  const engines = [sharedEngine, blockEngine];
  sharedEngine = undefined;
  blockEngine = undefined;
  textCache.clear();
  await Promise.all(engines.map(async (engine) => engine && (await engine.catch(() => undefined))?.close()));
}

function contentHash(png: Buffer): string {
  return createHash("sha256").update(png).digest("hex");
}

/** Unset until first used or set; then the store, or "off". */
let referenceStore: ReferenceTextStore | "off" | undefined;

/** Where reference texts are kept between runs (undefined: nowhere). Default: defaultReferenceTextDir(). */
export function setReferenceTextDir(dir: string | undefined): void {
  referenceStore = dir === undefined ? "off" : openReferenceTextStore(dir);
}

function referenceTextStore(): ReferenceTextStore | undefined {
  if (referenceStore === undefined) setReferenceTextDir(defaultReferenceTextDir());
  return referenceStore === "off" ? undefined : referenceStore;
}

export interface ReadTextOptions {
  /**
   * A reference picture (a task's checkpoint): its text is also kept on disk, so later
   * runs do not read it again (see reference-text-store.ts).
   */
  reference?: boolean;
  /** How to segment it (default `page`; `block` for a small crop). */
  layout?: OcrLayout;
}

/** The space-joined OCR text of a PNG, cached by content hash (in memory; on disk too for references). */
export async function readImageText(png: Buffer, options: ReadTextOptions = {}): Promise<string> {
  const engine = await getOcrEngine(options.layout ?? "page");
  const engineKey = engine.identity;
  const hash = contentHash(png);
  const key = `${engineKey}:${hash}`;
  const cached = textCache.get(key);
  if (cached) return cached;
  const store = options.reference ? referenceTextStore() : undefined;
  const reading = store
    ? store.get(engineKey, hash).then(async (stored) => {
        if (stored !== undefined) return stored;
        const text = joinOcrSegments(await engine.readSegments(png));
        await store.put(engineKey, hash, text);
        return text;
      })
    : engine.readSegments(png).then(joinOcrSegments);
  textCache.set(key, reading);
  reading.catch(() => textCache.delete(key));
  if (textCache.size > METRIC_SETTINGS.ocr.textCacheEntries) {
    const oldest = textCache.keys().next().value;
    if (oldest !== undefined) textCache.delete(oldest);
  }
  return reading;
}

/** OCR similarity of a reference checkpoint and a candidate screenshot (§3.5). */
export async function compareOcr(checkpointPng: Buffer, screenshotPng: Buffer): Promise<OcrComparison> {
  const [checkpointText, screenshotText] = await Promise.all([readImageText(checkpointPng, { reference: true }), readImageText(screenshotPng)]);
  return { similarity: textSimilarity(checkpointText, screenshotText), checkpointText, screenshotText };
}

export async function ocrEngineInfo(): Promise<OcrEngineInfo> {
  return (await getOcrEngine()).info;
}
