/**
 * The setup check that `npm start` and `npm test` run first: find Chromium and
 * ffmpeg, install the Debian packages when they are missing and we are root on
 * Debian/Ubuntu, otherwise stop with the exact command to run. redis-server and
 * native Tesseract (`tesseract-ocr`) are installed the same way, but neither is needed:
 * only queue mode uses redis-server, and without a working Tesseract the OCR metric runs
 * on tesseract.js (slower; the engine is recorded with every result). Setup says which
 * is missing, and why an install failed, a line each.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { errorMessage, IwrError } from "../errors.ts";
import { type FoundTool, findChromium, findFfmpeg, findRedisServer, findTesseract } from "./find-tools.ts";

export interface SetupReport {
  chromium: FoundTool;
  ffmpeg: FoundTool;
  installed: string[];
  /** Font packages still missing (only when they could not be installed). */
  missingFonts: string[];
  /** redis-server for queue mode, when found. */
  redisServer?: string;
  /** Native Tesseract, the default OCR engine when found and working (src/metrics/ocr-choice.ts). */
  tesseract?: string;
}

/**
 * The fonts the bundled suite's checkpoints were rendered with (the sites use the
 * generic sans-serif/serif/monospace families). Another font set renders other
 * pixels, and reference pages would no longer match their own checkpoints.
 */
const FONT_PACKAGES: Readonly<Record<string, string>> = {
  "fonts-dejavu-core": "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
  "fonts-dejavu-extra": "/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed.ttf",
  "fonts-liberation": "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
};

/** Packages wanted but not needed, each with how to find what it installs: a failed install of one is said, not fatal. */
const WANTED_PACKAGES: Readonly<Record<string, () => string | undefined>> = {
  "redis-server": () => findRedisServer(),
  "tesseract-ocr": () => findTesseract(),
};

const INSTALL_COMMAND = `sudo apt-get update && sudo apt-get install -y chromium ffmpeg redis-server tesseract-ocr ${Object.keys(FONT_PACKAGES).join(" ")}`;

/** The font packages whose files are missing. */
export function missingFontPackages(): string[] {
  return Object.entries(FONT_PACKAGES)
    .filter(([, file]) => !fs.existsSync(file))
    .map(([name]) => name);
}

/** Debian or a derivative (Ubuntu): where setup may install with apt-get. */
export function isDebianLike(): boolean {
  try {
    const release = fs.readFileSync("/etc/os-release", "utf8");
    return /^(ID|ID_LIKE)=.*\b(debian|ubuntu)\b/m.test(release);
  } catch {
    return false;
  }
}

function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/**
 * What a fresh machine needs from apt-get beyond the defaults: a download that drops is tried
 * again, and dpkg still busy with the machine's own first-boot upgrades is waited for rather
 * than failed on ("Could not get lock /var/lib/dpkg/lock-frontend").
 */
const APT_PATIENCE = ["-o", "Acquire::Retries=3", "-o", "DPkg::Lock::Timeout=300"];

export interface AptPatience {
  /**
   * `apt-get update` takes the package lists' lock without waiting (DPkg::Lock::Timeout is
   * dpkg's alone), and a first-boot update holds it: an update that failed on a lock is
   * tried again this many times, this far apart (default 8 × 15 s, two minutes). Any other
   * failure (no network, a broken source) is said at once.
   */
  updateRetries: number;
  updatePauseMs: number;
}

const DEFAULT_APT_PATIENCE: AptPatience = { updateRetries: 8, updatePauseMs: 15_000 };

/** What apt-get prints when another apt or dpkg holds the lock it needs. */
const LOCK_HELD = /Could not get lock|Unable to lock/i;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

interface AptRetry {
  retries: number;
  pauseMs: number;
  say: (line: string) => void;
}

/**
 * Runs `apt-get <args>` quietly, its errors passed through; with `retry`, a run that failed
 * on a held lock is tried again after a pause, said in a line. Throws SETUP_MISSING naming
 * the step, how often it was tried and the command to run.
 */
function aptGet(args: string[], hint: string, retry?: AptRetry): void {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const step = args.filter((arg) => !arg.startsWith("-")).join(" ");
  for (let attempt = 0; ; attempt++) {
    const result = spawnSync("apt-get", [...APT_PATIENCE, ...args], { stdio: ["ignore", "ignore", "pipe"], env });
    const stderr = result.stderr?.toString() ?? "";
    process.stderr.write(stderr);
    if (result.status === 0) return;
    if (!result.error && retry && attempt < retry.retries && LOCK_HELD.test(stderr)) {
      retry.say(`apt-get ${step} found apt locked by another process; trying again in ${retry.pauseMs / 1000} s (${attempt + 1} of ${retry.retries})`);
      sleepSync(retry.pauseMs);
      continue;
    }
    const tries = attempt > 0 ? ` ${attempt + 1} times` : "";
    const why = result.error ? errorMessage(result.error) : `exit ${result.status ?? result.signal}`;
    throw new IwrError("SETUP_MISSING", `apt-get ${step} failed${tries} (${why}); run: ${hint}`);
  }
}

/**
 * Installs the packages the project needs (a failure is fatal), then each one it only
 * wants on its own (failures are returned, to be said): a package missing from the apt
 * sources must keep out neither Chromium nor another wanted package.
 */
function aptInstall(needed: string[], wanted: string[], say: (line: string) => void, patience: AptPatience): { wantedFailures: string[] } {
  say(`installing ${[...needed, ...wanted].join(" ")} with apt-get (root on Debian/Ubuntu)…`);
  try {
    aptGet(["update", "-qq"], INSTALL_COMMAND, { retries: patience.updateRetries, pauseMs: patience.updatePauseMs, say });
  } catch (error) {
    if (needed.length > 0) throw error;
    return { wantedFailures: [errorMessage(error)] };
  }
  if (needed.length > 0) aptGet(["install", "-y", "-qq", ...needed], INSTALL_COMMAND);
  const wantedFailures: string[] = [];
  for (const name of wanted) {
    try {
      aptGet(["install", "-y", "-qq", name], `sudo apt-get install -y ${name}`);
    } catch (error) {
      wantedFailures.push(errorMessage(error));
    }
  }
  return { wantedFailures };
}

/** The one line `iwr setup` and `iwr start` print: what was found where. */
export function setupSummary(report: SetupReport): string {
  return (
    `setup: chromium ${report.chromium.path} (${report.chromium.source}); ffmpeg ${report.ffmpeg.path} (${report.ffmpeg.source})` +
    `${report.redisServer ? `; redis-server ${report.redisServer}` : ""}` +
    `${report.tesseract ? `; tesseract ${report.tesseract}` : ""}`
  );
}

export function ensureTools(say: (line: string) => void = (line) => console.error(line), patience: AptPatience = DEFAULT_APT_PATIENCE): SetupReport {
  let chromium = findChromium();
  let ffmpeg = findFfmpeg();
  if (process.env.IWR_CHROMIUM && !chromium) {
    throw new IwrError("SETUP_MISSING", `IWR_CHROMIUM=${process.env.IWR_CHROMIUM} is not an executable file`);
  }
  const missing: string[] = [];
  if (!chromium) missing.push("chromium");
  // The npm-shipped ffmpeg works but has no ffprobe and is old: prefer the system one.
  if (!ffmpeg || ffmpeg.source === "npm") missing.push("ffmpeg");
  if (isDebianLike()) missing.push(...missingFontPackages());
  const optional = Object.entries(WANTED_PACKAGES)
    .filter(([, find]) => !find())
    .map(([name]) => name);
  const installed: string[] = [];
  if (missing.length + optional.length > 0 && isRoot() && isDebianLike()) {
    const { wantedFailures } = aptInstall(missing, optional, say, patience);
    installed.push(...missing, ...optional.filter((name) => WANTED_PACKAGES[name]?.()));
    for (const failure of wantedFailures) say(`note: ${failure}`);
    chromium = findChromium();
    ffmpeg = findFfmpeg();
  }
  if (!chromium) {
    throw new IwrError("SETUP_MISSING", `Chromium not found. Install it with: ${INSTALL_COMMAND}  (or set IWR_CHROMIUM=/path/to/chrome)`);
  }
  if (!ffmpeg) {
    throw new IwrError("SETUP_MISSING", `ffmpeg not found. Install it with: ${INSTALL_COMMAND}  (or set IWR_FFMPEG=/path/to/ffmpeg)`);
  }
  const missingFonts = isDebianLike() ? missingFontPackages() : [];
  if (missingFonts.length > 0) {
    say(
      `warning: font packages ${missingFonts.join(", ")} are missing; pages will render differently from the bundled checkpoints. Install: ${INSTALL_COMMAND}`,
    );
  }
  const redisServer = findRedisServer();
  if (!redisServer)
    say(
      "note: redis-server not found; only queue mode (iwr run --queue, iwr worker) needs it. " +
        "Install: sudo apt-get install -y redis-server  (or set IWR_REDIS_SERVER)",
    );
  const tesseract = findTesseract();
  if (!tesseract)
    say(
      "note: native Tesseract not found, or it does not run; OCR runs on tesseract.js, about 1.5x the CPU. " +
        "Install: sudo apt-get install -y tesseract-ocr  (or set IWR_TESSERACT)",
    );
  return { chromium, ffmpeg, installed, missingFonts, ...(redisServer ? { redisServer } : {}), ...(tesseract ? { tesseract } : {}) };
}
