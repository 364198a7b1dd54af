/**
 * Tesseract as a native program (Debian's `tesseract-ocr`), kept running: the same
 * engine as tesseract.js, compiled for the CPU (AVX2/FMA) instead of WebAssembly, reading
 * the same trained data (`@tesseract.js-data/eng` 4.0.0_best_int, unpacked once into a
 * folder it can load) with the same options.
 *
 * One `tesseract` process per pool slot, started once with `stream_filelist` so it reads
 * image paths from stdin, one a line, and writes each page's text to stdout as it goes.
 * The text renderer writes the page separator (form feed) before every page but the
 * first, so a page's text is known complete only when the next page starts: each image
 * is followed by a 16 × 16 blank "sentinel" image, read in about a millisecond, whose
 * separator closes the image's text. A process reads one image at a time.
 *
 * An image Tesseract cannot read ends its process (`ProcessPagesFileList` stops at the
 * first unreadable page): that reading fails with Tesseract's own message, and the next
 * reading starts a new process. Each process runs with one OpenMP thread (the pool
 * decides the parallelism) at the same lowered priority as the tesseract.js workers
 * (ocr-worker.cjs: OCR can wait a moment, a timed replay cannot).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import sharp from "sharp";
import { IwrError } from "../errors.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";
import { processCpuSec } from "../files/process-table.ts";
import { log } from "../log/logger.ts";
import { noteOcrReading } from "./ocr-cost.ts";

const logger = log("evaluator");

/** Nice value of the OCR processes (as ocr-worker.cjs gives the tesseract.js threads). */
const OCR_PROCESS_NICENESS = 10;
const FORM_FEED = "\f";
/** Lines Tesseract prints while working that say nothing about a failure. */
const PROGRESS_LINE = /^Page \d+ : /;
/** Lines of stderr kept for a failure's message. */
const KEPT_STDERR_LINES = 8;

/**
 * A folder holding `<language>.traineddata` unpacked from the gzipped copy tesseract.js
 * loads, named by the packed file's content (unpacked once per machine). Its content, not
 * its modification time: `npm ci` writes the package's files anew, and a name from the
 * time left a 5 MB copy behind in the temporary folder at every install.
 */
export function unpackedTrainedData(gzFile: string, language: string, baseDir = path.join(os.tmpdir(), "iwr-tessdata")): string {
  const packed = fs.readFileSync(gzFile);
  const digest = sha256Hex(packed).slice(0, 16);
  const dir = path.join(baseDir, `${language}-${digest}`);
  const file = path.join(dir, `${language}.traineddata`);
  if (!fs.existsSync(file)) writeFileAtomicSync(file, gunzipSync(packed));
  return dir;
}

export interface NativeTesseractOptions {
  executable: string;
  /** Folder with `<language>.traineddata`. */
  tessdataDir: string;
  language: string;
  pageSegMode: string;
  dpi: string;
}

interface Job {
  resolve(text: string): void;
  reject(error: Error): void;
}

/** One long-lived `tesseract` process: read(png) one image at a time. */
class TesseractProcess {
  private child: ChildProcessWithoutNullStreams | undefined;
  private pending: Job | undefined;
  /** stdout not yet split at a separator. */
  private buffer = "";
  /** Separators seen since this process started: even ones close an image's text, odd ones a sentinel's. */
  private separators = 0;
  private stderrTail: string[] = [];
  private serial = 0;

  constructor(
    private readonly options: NativeTesseractOptions,
    private readonly workDir: string,
    private readonly sentinel: string,
    /** Names this process's image files apart from the other processes' in workDir. */
    private readonly slot: number,
  ) {}

  private start(): ChildProcessWithoutNullStreams {
    const { options } = this;
    const args = ["-", "stdout", "--tessdata-dir", options.tessdataDir, "-l", options.language, "--oem", "1", "--psm", options.pageSegMode];
    args.push("--dpi", options.dpi, "-c", "stream_filelist=true");
    const child = spawn(options.executable, args, { env: { ...process.env, OMP_THREAD_LIMIT: "1" }, stdio: ["pipe", "pipe", "pipe"] });
    if (process.platform === "linux" && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, OCR_PROCESS_NICENESS);
      } catch {
        // Not permitted here: OCR runs at normal priority.
      }
    }
    this.buffer = "";
    this.separators = 0;
    this.stderrTail = [];
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.onOutput(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) {
        if (line.trim() === "" || PROGRESS_LINE.test(line)) continue;
        this.stderrTail.push(line.trim());
        if (this.stderrTail.length > KEPT_STDERR_LINES) this.stderrTail.shift();
      }
    });
    // A write to a process that just ended: its exit handler fails the reading.
    child.stdin.on("error", () => undefined);
    // "close", not "exit": by then stdout has been read to its end.
    child.on("error", (error) => this.onEnd(child, `could not run ${options.executable}: ${error.message}`));
    child.on("close", (code, signal) => this.onEnd(child, `${options.executable} ended (${signal ?? `exit ${code}`})`));
    this.child = child;
    return child;
  }

  private onOutput(chunk: string): void {
    this.buffer += chunk;
    let at = this.buffer.indexOf(FORM_FEED);
    while (at >= 0) {
      const text = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 1);
      this.separators += 1;
      // Separator 1 closes the first image, 2 the first sentinel, 3 the second image, ...
      if (this.separators % 2 === 1) this.finish((job) => job.resolve(text));
      at = this.buffer.indexOf(FORM_FEED);
    }
  }

  private onEnd(child: ChildProcessWithoutNullStreams, reason: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    const detail = this.stderrTail.length > 0 ? `: ${this.stderrTail.join(" / ")}` : "";
    this.finish((job) => job.reject(new IwrError("EVALUATOR", `native Tesseract could not read the image (${reason})${detail}`)));
  }

  private finish(settle: (job: Job) => void): void {
    const job = this.pending;
    this.pending = undefined;
    if (job) settle(job);
  }

  async read(png: Buffer): Promise<string> {
    if (this.pending) throw new IwrError("EVALUATOR", "native Tesseract: one reading at a time per process");
    this.serial += 1;
    const file = path.join(this.workDir, `${this.slot}-${this.serial}.png`);
    await fs.promises.writeFile(file, png);
    try {
      const child = this.child ?? this.start();
      // Its CPU time around the reading, for what OCR costs by purpose (ocr-cost.ts): a process's start (loading the model) counts with its first.
      const cpuBefore = child.pid === undefined ? undefined : processCpuSec(child.pid);
      const text = await new Promise<string>((resolve, reject) => {
        this.pending = { resolve, reject };
        child.stdin.write(`${file}\n${this.sentinel}\n`);
      });
      const cpuAfter = child.pid === undefined ? undefined : processCpuSec(child.pid);
      // Noted here, where the caller awaits (not in the output's handler), so it goes to the caller's purpose.
      noteOcrReading(cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore);
      return text;
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }

  close(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    return new Promise((resolve) => {
      child.once("close", () => resolve());
      child.stdin.end();
      // A process that does not end on its own within a second is stopped.
      setTimeout(() => child.kill("SIGKILL"), 1000).unref();
    });
  }
}

/** A pool of long-lived `tesseract` processes: readings wait for the first idle one, in order. */
export class NativeTesseractPool {
  private readonly idle: TesseractProcess[];
  private readonly waiting: Array<(process: TesseractProcess) => void> = [];
  private readonly processes: TesseractProcess[];
  private readonly workDir: string;

  private constructor(options: NativeTesseractOptions, size: number, workDir: string, sentinel: string) {
    this.workDir = workDir;
    this.processes = Array.from({ length: size }, (_, slot) => new TesseractProcess(options, workDir, sentinel, slot));
    this.idle = [...this.processes];
  }

  /** Starts the pool (its processes start on their first reading). */
  static async open(options: NativeTesseractOptions, size: number): Promise<NativeTesseractPool> {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-ocr-"));
    const sentinel = path.join(workDir, "sentinel.png");
    await sharp({ create: { width: 16, height: 16, channels: 3, background: "#ffffff" } })
      .png()
      .toFile(sentinel);
    return new NativeTesseractPool(options, size, workDir, sentinel);
  }

  async read(png: Buffer): Promise<string> {
    const worker = this.idle.pop() ?? (await new Promise<TesseractProcess>((resolve) => this.waiting.push(resolve)));
    try {
      return await worker.read(png);
    } finally {
      const next = this.waiting.shift();
      if (next) next(worker);
      else this.idle.push(worker);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.map((worker) => worker.close()));
    fs.rmSync(this.workDir, { recursive: true, force: true });
    logger.debug(`native Tesseract pool of ${this.processes.length} closed`);
  }
}
