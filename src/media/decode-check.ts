/**
 * Whether a video decodes from start to end: a truncated or corrupt file has a readable
 * header (its stated duration looks fine) but stops decoding part way, and generation
 * would then sample only the frames before the damage. One ffmpeg pass decodes every
 * frame to nowhere (`-f null`) and reports how far it got (`-progress`) and what broke.
 */
import { spawn } from "node:child_process";
import { IwrError } from "../errors.ts";
import { findFfmpeg } from "../setup/find-tools.ts";

export interface DecodeReport {
  /** How far decoding got, in seconds of video. */
  decodedSec: number;
  /** Frames decoded. */
  frames: number;
  /** ffmpeg's error lines, tags removed, duplicates dropped (empty for a clean file). */
  errors: string[];
}

/** A whole decode of a minute of 720p takes about a second here; this only stops a hang. */
const DECODE_TIMEOUT_MS = 120_000;

function cleanErrors(stderr: string, file: string): string[] {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.replace(/^\[[^\]]*@ 0x[0-9a-f]+\]\s*/i, "").trim())
    .map((line) => (line.startsWith(`${file}: `) ? line.slice(file.length + 2) : line))
    .filter(Boolean);
  return [...new Set(lines)];
}

export function decodeWholeVideo(file: string): Promise<DecodeReport> {
  const ffmpeg = findFfmpeg();
  if (!ffmpeg) return Promise.reject(new IwrError("SETUP_MISSING", `cannot decode ${file}: ffmpeg not found (run \`npx iwr setup\`)`));
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg.path, ["-v", "error", "-nostdin", "-i", file, "-map", "0:v:0", "-an", "-f", "null", "-progress", "pipe:1", "-nostats", "-"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let progress = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      // Only the latest report matters; keep the tail.
      progress = (progress + chunk.toString("utf8")).slice(-4000);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-8000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), DECODE_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new IwrError("MEDIA", `cannot run ffmpeg to decode ${file}: ${error.message}`, { file }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const last = (key: string): number => {
        const values = [...progress.matchAll(new RegExp(`^${key}=(\\d+)$`, "gm"))];
        return Number(values.at(-1)?.[1] ?? 0);
      };
      const errors = cleanErrors(stderr, file);
      if (signal) errors.push(`ffmpeg was stopped after ${DECODE_TIMEOUT_MS / 1000} s (${signal})`);
      else if (code !== 0 && errors.length === 0) errors.push(`ffmpeg exited with code ${code}`);
      resolve({ decodedSec: last("out_time_us") / 1e6, frames: last("frame"), errors });
    });
  });
}

/**
 * What is wrong with a video that does not decode to the end of its stated duration
 * (`problem`: a frame or half a second short is container rounding, not damage), or that
 * decodes whole but with errors on the way (`warning`: frames in between may be broken).
 */
export async function checkVideoDecodes(file: string, statedSec: number, fps: number): Promise<{ problem?: string; warning?: string }> {
  const report = await decodeWholeVideo(file);
  const tolerance = Math.max(0.5, fps > 0 ? 2 / fps : 0);
  const detail = report.errors.length > 0 ? `: ${report.errors.slice(0, 3).join("; ")}` : "";
  if (statedSec - report.decodedSec > tolerance) {
    return {
      problem:
        `${file}: the video decodes only to ${report.decodedSec.toFixed(1)} s of its stated ${statedSec.toFixed(1)} s ` +
        `(${report.frames} frames): truncated or damaged${detail}`,
    };
  }
  if (report.errors.length > 0) return { warning: `${file}: ffmpeg reported errors while decoding the video${detail}` };
  return {};
}
