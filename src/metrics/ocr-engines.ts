/**
 * The two builds of Tesseract the OCR metric can run, behind one interface (ocr.ts picks
 * one per process):
 *
 *  - `tesseract` (native, ocr-native.ts): Debian's `tesseract-ocr`, a pool of long-lived
 *    processes, the default when it is installed and runs (`iwr setup` installs it as root
 *    on Debian/Ubuntu);
 *  - `tesseract.js` (WebAssembly, in worker threads of this process): always there, the
 *    fallback (IWR_OCR_ENGINE names either).
 *
 * Both read with the same trained data (@tesseract.js-data/eng, English LSTM model
 * `4.0.0_best_int`), the same page segmentation mode and resolution; what they read is
 * compared on the bundled suite and the natural corpus by `npm run bench:ocr`. Each
 * engine's identity (build, version, data, options) keys the cached readings and is
 * recorded with every result, so no table averages readings of two engines.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createWorker, OEM, type PSM, type Worker } from "tesseract.js";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { nativeTesseractVersion } from "../setup/find-tools.ts";
import { noteOcrReading } from "./ocr-cost.ts";
import { NativeTesseractPool, unpackedTrainedData } from "./ocr-native.ts";
import { METRIC_SETTINGS } from "./settings.ts";

export interface OcrEngineInfo {
  /** "tesseract" (native) or "tesseract.js" */
  name: string;
  /** e.g. "5.3.0" or "7.0.0" */
  version: string;
  /** Model/data and options that change what is read, e.g. "eng 4.0.0_best_int psm 3 dpi 96". */
  detail: string;
}

export interface OcrEngine {
  readonly info: OcrEngineInfo;
  /**
   * Everything that decides the text read from an image: the engine's build and version,
   * the language data, the options and how segments are joined. Keys the cached readings.
   */
  readonly identity: string;
  /** Text segments (lines) in reading order. */
  readSegments(png: Buffer): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * How Tesseract segments the picture: `page` (mode 3, automatic: a whole screen, light
 * text on dark included) for screenshots, `block` (mode 6, one uniform block) for a
 * small crop, where mode 3 sees a lone digit or word as noise and reads nothing.
 */
export type OcrLayout = "page" | "block";
export const PAGE_SEG_MODES: Record<OcrLayout, string> = { page: METRIC_SETTINGS.ocr.pageSegMode, block: "6" };

const logger = log("evaluator");
const require = createRequire(import.meta.url);
const OCR_WORKER_SCRIPT = fileURLToPath(new URL("./ocr-worker.cjs", import.meta.url));
/** tesseract.js's own Node worker script, which OCR_WORKER_SCRIPT loads. */
const TESSERACT_WORKER_SCRIPT = "tesseract.js/src/worker-script/node/index.js";
/** Bumped when the stored form of a text changes (today: segments joined by joinOcrSegments). */
export const STORED_TEXT_FORMAT = 1;

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

function detailOf(layout: OcrLayout): string {
  const settings = METRIC_SETTINGS.ocr;
  return `${settings.language} ${settings.trainedData} psm ${PAGE_SEG_MODES[layout]} dpi ${settings.dpi}`;
}

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

async function startTesseractJsWorker(layout: OcrLayout): Promise<Worker> {
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

/**
 * Readings wait here for the first idle worker, in the order they were asked for.
 *
 * Closed, the pool refuses readings instead of handing out its terminated workers. Why:
 * readings outlive the work that asked for them (the evaluator reads a task's checkpoints
 * ahead, unawaited, and a page that never loads ends its task while they queue), so some
 * still wait or run when the command ends and shuts OCR down. tesseract.js sends a job to
 * a terminated worker from an unawaited async function, an unhandled rejection ("Cannot
 * read properties of null (reading 'postMessage')") that ended `iwr evaluate` with exit
 * code 3 after its report; and a job already sent is never answered once its worker is
 * gone. So closing fails the waiting readings and those in flight, and later ones fail
 * at once, each with an error their callers handle.
 */
class WorkerPool {
  private readonly idle: Worker[];
  private readonly waiting: Array<{ resolve: (worker: Worker) => void; reject: (error: unknown) => void }> = [];
  private closed = false;
  private markClosed: (error: IwrError) => void = () => undefined;
  /** Rejects when the pool closes: what a reading in flight is raced against. */
  private readonly closing: Promise<never>;

  constructor(private readonly workers: readonly Worker[]) {
    this.idle = [...workers];
    this.closing = new Promise<never>((_, reject) => {
      this.markClosed = reject;
    });
    // Handled here too: the pool may close with no reading in flight to race it.
    this.closing.catch(() => undefined);
  }

  async run<T>(job: (worker: Worker) => Promise<T>): Promise<T> {
    if (this.closed) throw closedPoolError();
    const worker = this.idle.pop() ?? (await new Promise<Worker>((resolve, reject) => this.waiting.push({ resolve, reject })));
    try {
      // A waiter handed a worker just before the pool closed.
      if (this.closed) throw closedPoolError();
      return await Promise.race([job(worker), this.closing]);
    } finally {
      const next = this.waiting.shift();
      if (next) next.resolve(worker);
      else this.idle.push(worker);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = closedPoolError();
    this.markClosed(error);
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
    // A reading started just now sends its job a few microtasks later (recognize awaits its
    // image first, at once for a Buffer); terminated before that, its worker would be gone
    // when it sends. One turn of the event loop lets every started reading send.
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.workers.map((worker) => worker.terminate().catch(() => undefined)));
  }
}

function closedPoolError(): IwrError {
  return new IwrError("EVALUATOR", "OCR: the tesseract.js workers were shut down; the reading was not made");
}

/** tesseract.js: `size` WebAssembly workers in threads of this process, started at once. */
export async function startTesseractJs(size: number, layout: OcrLayout): Promise<OcrEngine> {
  const starting = Array.from({ length: size }, () => startTesseractJsWorker(layout));
  const started = await Promise.allSettled(starting);
  const workers = started.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
  const failure = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
  if (failure) {
    await Promise.all(workers.map((worker) => worker.terminate().catch(() => undefined)));
    throw new IwrError("SETUP_MISSING", `OCR engine tesseract.js could not start: ${errorMessage(failure.reason)}`, {}, { cause: failure.reason });
  }
  const pool = new WorkerPool(workers);
  const info: OcrEngineInfo = { name: "tesseract.js", version: packageVersion("tesseract.js"), detail: detailOf(layout) };
  logger.debug(`OCR pool of ${size} tesseract.js worker(s) started`, { engine: info });
  const identity = engineIdentity(info, `core@${packageVersion("tesseract.js-core")}`);
  return {
    info,
    identity,
    async readSegments(png) {
      const result = await pool.run((worker) => worker.recognize(png));
      // Read in threads of this process: its CPU is not told apart from the rest.
      noteOcrReading(undefined);
      // Tesseract separates lines with "\n" (blocks with a blank line): one line is one segment.
      return result.data.text.split("\n");
    },
    close: () => pool.close(),
  };
}

/** What decides an engine's readings: the engine and its runtime, the trained data, the options, the stored text's format. */
function engineIdentity(info: OcrEngineInfo, runtime: string): string {
  return [
    `${info.name}@${info.version}`,
    runtime,
    `data@${packageVersion("@tesseract.js-data/eng")}`,
    "oem lstm",
    info.detail,
    `text-format ${STORED_TEXT_FORMAT}`,
  ].join(" ");
}

/** Native Tesseract (`executable`): `size` long-lived processes, reading the same trained data as tesseract.js. */
export async function startNativeTesseract(executable: string, size: number, layout: OcrLayout): Promise<OcrEngine> {
  const settings = METRIC_SETTINGS.ocr;
  const version = nativeTesseractVersion(executable);
  if (!version) {
    throw new IwrError(
      "SETUP_MISSING",
      `OCR engine tesseract: ${executable} --version did not answer as Tesseract does (reinstall tesseract-ocr, or set IWR_TESSERACT)`,
    );
  }
  const tessdataDir = unpackedTrainedData(path.join(tesseractLangPath(), `${settings.language}.traineddata.gz`), settings.language);
  const pool = await NativeTesseractPool.open(
    { executable, tessdataDir, language: settings.language, pageSegMode: PAGE_SEG_MODES[layout], dpi: settings.dpi },
    size,
  );
  const info: OcrEngineInfo = { name: "tesseract", version: version.tesseract, detail: detailOf(layout) };
  logger.debug(`OCR pool of ${size} native Tesseract process(es) (${executable})`, { engine: info });
  const identity = engineIdentity(info, `leptonica@${version.leptonica}`);
  return {
    info,
    identity,
    // Tesseract separates lines with "\n" (blocks with a blank line): one line is one segment.
    readSegments: async (png) => (await pool.read(png)).split("\n"),
    close: () => pool.close(),
  };
}
