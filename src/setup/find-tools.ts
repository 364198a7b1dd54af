/**
 * Finding Chromium, ffmpeg, redis-server and Tesseract (one that runs). Order for Chromium: an explicit IWR_CHROMIUM, then
 * Playwright's own browser cache, then a system Chromium/Chrome. For ffmpeg: an
 * explicit IWR_FFMPEG, the system one (it comes with ffprobe), then the static build
 * shipped by @ffmpeg-installer (no ffprobe: probing falls back to `ffmpeg -i`).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

export interface FoundTool {
  path: string;
  source: "env" | "playwright-cache" | "system" | "npm";
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function playwrightCacheChromium(): string | undefined {
  const root = process.env.PLAYWRIGHT_BROWSERS_PATH || path.join(os.homedir(), ".cache", "ms-playwright");
  let entries: string[];
  try {
    entries = fs.readdirSync(root);
  } catch {
    return undefined;
  }
  // Newest revision first; both full Chromium and the headless shell will do.
  const dirs = entries
    .filter((name) => /^chromium(_headless_shell)?-\d+$/.test(name))
    .sort()
    .reverse();
  for (const dir of dirs) {
    for (const rel of ["chrome-linux/chrome", "chrome-linux64/chrome", "chrome-linux/headless_shell", "chrome-headless-shell-linux64/chrome-headless-shell"]) {
      const candidate = path.join(root, dir, rel);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

export function findChromium(env: NodeJS.ProcessEnv = process.env): FoundTool | undefined {
  const explicit = env.IWR_CHROMIUM;
  if (explicit) return isExecutable(explicit) ? { path: explicit, source: "env" } : undefined;
  const cached = playwrightCacheChromium();
  if (cached) return { path: cached, source: "playwright-cache" };
  for (const name of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"]) {
    const found = onPath(name);
    if (found) return { path: found, source: "system" };
  }
  return undefined;
}

function npmFfmpeg(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const installer = require("@ffmpeg-installer/ffmpeg") as { path?: string };
    return installer.path && isExecutable(installer.path) ? installer.path : undefined;
  } catch {
    return undefined;
  }
}

export function findFfmpeg(env: NodeJS.ProcessEnv = process.env): FoundTool | undefined {
  const explicit = env.IWR_FFMPEG;
  if (explicit) return isExecutable(explicit) ? { path: explicit, source: "env" } : undefined;
  const system = onPath("ffmpeg");
  if (system) return { path: system, source: "system" };
  const shipped = npmFfmpeg();
  return shipped ? { path: shipped, source: "npm" } : undefined;
}

/** redis-server (queue mode only: `iwr run --queue`, `iwr worker`, and the tests that start one), from IWR_REDIS_SERVER or PATH. */
export function findRedisServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.IWR_REDIS_SERVER;
  if (explicit) return isExecutable(explicit) ? explicit : undefined;
  return onPath("redis-server");
}

export interface NativeTesseractVersion {
  /** e.g. "5.3.0" */
  tesseract: string;
  /** e.g. "1.82.0" */
  leptonica: string;
}

/** Each program's answer, asked once per process: every caller sees the same one (a run must not switch engines midway). */
const tesseractVersions = new Map<string, NativeTesseractVersion | undefined>();

/** The version of a `tesseract` executable, or undefined when it does not answer `--version` as Tesseract does. */
export function nativeTesseractVersion(executable: string): NativeTesseractVersion | undefined {
  if (tesseractVersions.has(executable)) return tesseractVersions.get(executable);
  const result = spawnSync(executable, ["--version"], { encoding: "utf8", timeout: 10_000 });
  const output = `${result.stdout ?? ""}\n${result.stderr ?? ""}`;
  const tesseract = result.status === 0 ? /^tesseract\s+v?(\d+\.\d+\.\d+\S*)/m.exec(output)?.[1] : undefined;
  const leptonica = /leptonica-(\d+\.\d+\.\d+\S*)/m.exec(output)?.[1];
  const version = tesseract ? { tesseract, leptonica: leptonica ?? "unknown" } : undefined;
  tesseractVersions.set(executable, version);
  return version;
}

/**
 * Native Tesseract (Debian's `tesseract-ocr`), the default OCR engine (src/metrics/ocr.ts
 * falls back to tesseract.js without it), from IWR_TESSERACT or PATH: only a program that
 * answers `--version` as Tesseract does (a broken install counts as none).
 */
export function findTesseract(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.IWR_TESSERACT;
  const candidate = explicit ? (isExecutable(explicit) ? explicit : undefined) : onPath("tesseract");
  return candidate && nativeTesseractVersion(candidate) ? candidate : undefined;
}

/** ffprobe beside the chosen ffmpeg, or on PATH; undefined with the npm-shipped build. */
export function findFfprobe(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.IWR_FFPROBE;
  if (explicit && isExecutable(explicit)) return explicit;
  const ffmpeg = findFfmpeg(env);
  if (ffmpeg) {
    const sibling = path.join(path.dirname(ffmpeg.path), "ffprobe");
    if (isExecutable(sibling)) return sibling;
  }
  return onPath("ffprobe");
}

/** The located tools, or a clear error naming what is missing. Cached per process. */
let cachedTools: { chromium: FoundTool; ffmpeg: FoundTool } | undefined;

export function requireTools(): { chromium: FoundTool; ffmpeg: FoundTool } {
  if (cachedTools) return cachedTools;
  const chromium = findChromium();
  const ffmpeg = findFfmpeg();
  const missing = [!chromium && "Chromium", !ffmpeg && "ffmpeg"].filter(Boolean);
  if (!chromium || !ffmpeg) {
    throw new Error(`${missing.join(" and ")} not found: run \`npx iwr setup\` (or set IWR_CHROMIUM / IWR_FFMPEG)`);
  }
  cachedTools = { chromium, ffmpeg };
  return cachedTools;
}
