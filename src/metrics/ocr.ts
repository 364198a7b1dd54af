/**
 * §3.5 OCR: the text of a screenshot, as the space-joined list of segments an OCR
 * engine reads, and the similarity of two screenshots' texts.
 *
 * Engine: the benchmark uses easyocr (English), which has no Node port. We use
 * Tesseract (English LSTM model `4.0.0_best_int`, offline) with page segmentation mode
 * 3: Debian's native build (`tesseract`) when it is installed, else tesseract.js
 * (WebAssembly, always there); IWR_OCR_ENGINE names one (ocr-choice.ts, ocr-engines.ts). It reads
 * body text, headings and light-on-dark text; like any global-threshold OCR it can miss
 * short white labels on saturated buttons that easyocr would read, so OCR numbers are
 * close to, not identical with, the harness's. The engine's name and version are
 * recorded with every result.
 *
 * A small pool of engine workers per process (one reading is single-threaded and costs
 * 0.2–1 s of CPU on a 720p screen, so one worker makes every reading queue behind the
 * others: the judge's region crops behind the evalpoints, one task behind another). The
 * pool is started on first use and reused; `setOcrPoolSize()` sizes it before that and
 * `shutdownOcr()` ends it.
 *
 * Every image is read once per content (image-readings.ts): the same picture asked for
 * again — a checkpoint for every candidate, a screenshot equal to the previous one or to
 * a checkpoint, the judge's and the metric's reading of one screen, and any of these in
 * a later run — is answered from memory or from the on-disk store.
 */
import os from "node:os";
import { IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { type ImageReader, readDerivedOnce, readOnce } from "./image-readings.ts";
import { resolveOcrEngine } from "./ocr-choice.ts";
import { type OcrEngine, type OcrEngineInfo, type OcrLayout, startNativeTesseract, startTesseractJs } from "./ocr-engines.ts";
import { joinOcrSegments, textSimilarity } from "./text-similarity.ts";

export type { OcrEngine, OcrEngineInfo, OcrLayout } from "./ocr-engines.ts";

export interface OcrComparison {
  similarity: number;
  /** Space-joined text of the reference checkpoint (not lower-cased; the similarity lower-cases). */
  checkpointText: string;
  /** Space-joined text of the candidate screenshot. */
  screenshotText: string;
}

const logger = log("evaluator");

function startEngine(size: number, layout: OcrLayout): Promise<OcrEngine> {
  const chosen = resolveOcrEngine();
  return chosen.executable ? startNativeTesseract(chosen.executable, size, layout) : startTesseractJs(size, layout);
}

/**
 * One more worker than evaluation workers (a task's evalpoint readings and its judge's
 * crops come in bursts together), never more than the CPUs. Each layout's pool has this
 * size (getOcrEngine), so a process holds up to twice as many workers.
 */
export function ocrPoolSizeFor(evaluationWorkers: number): number {
  return Math.max(1, Math.min(os.availableParallelism(), Math.max(1, Math.floor(evaluationWorkers)) + 1));
}

let poolSize = ocrPoolSizeFor(1);
const engines = new Map<OcrLayout, Promise<OcrEngine>>();

/** How many workers the next pool start uses (a running pool keeps its size until shutdownOcr()). */
export function setOcrPoolSize(size: number): void {
  if (!Number.isInteger(size) || size < 1) throw new IwrError("CONFIG_INVALID", `OCR pool size: expected a positive integer, got ${size}`);
  poolSize = size;
}

/**
 * The process's OCR engine for a layout, started on first use, each layout with a pool of
 * the same size: the judge's crops (block layout) come in bursts of dozens while the whole
 * screens wait, and with one crop worker the other cores sat idle through each burst. A
 * failed start is not kept: the next call retries.
 */
export function getOcrEngine(layout: OcrLayout = "page"): Promise<OcrEngine> {
  let engine = engines.get(layout);
  if (!engine) {
    const starting = startEngine(poolSize, layout);
    engine = starting;
    engines.set(layout, starting);
    starting.catch(() => {
      if (engines.get(layout) === starting) engines.delete(layout);
    });
  }
  return engine;
}

/** Ends the OCR workers (call once at shutdown; a later OCR call starts new ones). Readings already made stay known. */
export async function shutdownOcr(): Promise<void> {
  const running = [...engines.values()];
  engines.clear();
  await Promise.all(running.map(async (engine) => (await engine.catch(() => undefined))?.close()));
  logger.debug("OCR engines shut down");
}

/** An engine's reading of images as text, for readOnce. */
function textReader(engine: OcrEngine): ImageReader<string> {
  return {
    kind: "ocr-text",
    identity: engine.identity,
    read: async (png) => joinOcrSegments(await engine.readSegments(png)),
    encode: (text) => Buffer.from(text, "utf8"),
    decode: (stored) => stored.toString("utf8"),
    size: (text) => 2 * text.length,
  };
}

const readers = new WeakMap<OcrEngine, ImageReader<string>>();

export interface ReadTextOptions {
  /** How to segment it (default `page`; `block` for a small crop). */
  layout?: OcrLayout;
}

async function textReaderFor(layout: OcrLayout): Promise<ImageReader<string>> {
  const engine = await getOcrEngine(layout);
  let reader = readers.get(engine);
  if (!reader) {
    reader = textReader(engine);
    readers.set(engine, reader);
  }
  return reader;
}

/** The space-joined OCR text of a PNG, read once per image content (see the module comment). */
export async function readImageText(png: Buffer, options: ReadTextOptions = {}): Promise<string> {
  return readOnce(await textReaderFor(options.layout ?? "page"), png);
}

/**
 * The OCR text of an image made from `source` by `recipe` (a crop prepared for reading):
 * made and read once per source content and recipe, in this process and across runs, so a
 * crop already read costs neither its preparation nor its decoding (image-readings.ts).
 */
export async function readDerivedImageText(source: Buffer, recipe: string, derive: () => Promise<Buffer>, options: ReadTextOptions = {}): Promise<string> {
  return readDerivedOnce(await textReaderFor(options.layout ?? "page"), source, recipe, derive);
}

/** OCR similarity of a reference checkpoint and a candidate screenshot (§3.5). */
export async function compareOcr(checkpointPng: Buffer, screenshotPng: Buffer): Promise<OcrComparison> {
  const [checkpointText, screenshotText] = await Promise.all([readImageText(checkpointPng), readImageText(screenshotPng)]);
  return { similarity: textSimilarity(checkpointText, screenshotText), checkpointText, screenshotText };
}

export async function ocrEngineInfo(): Promise<OcrEngineInfo> {
  return (await getOcrEngine()).info;
}
