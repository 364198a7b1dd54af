/**
 * Real H.264 test videos made by ffmpeg whose pictures say what time it is: every
 * frame is a flat grey whose level encodes the whole second it belongs to, so a
 * sampled frame can be checked against the moment it claims to show.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";

const run = promisify(execFile);

/** Luma steps per second of video: coarse enough to survive YUV→RGB rounding. */
const LUMA_PER_SECOND = 2;

export interface TimecodedVideoOptions {
  durationSec: number;
  fps: number;
  width?: number;
  height?: number;
}

/** Writes `file` (mp4, lossless H.264 so the grey levels are exact). Grey runs 16 + 2·second: up to 110 s. */
export async function makeTimecodedVideo(file: string, options: TimecodedVideoOptions): Promise<void> {
  const { durationSec, fps, width = 160, height = 90 } = options;
  await run("ffmpeg", [
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    `color=black:s=${width}x${height}:r=${fps}:d=${durationSec}`,
    "-vf",
    `geq=lum='16+${LUMA_PER_SECOND}*floor(T)':cb=128:cr=128`,
    "-c:v",
    "libx264",
    "-qp",
    "0",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
    file,
  ]);
}

/** The whole second of video a sampled PNG frame comes from (read off its centre pixel). */
export async function secondShownBy(png: Buffer): Promise<number> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const centre = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
  const grey = data[centre] ?? 0;
  // Full-range RGB grey back to limited-range luma, then to the second it encodes.
  return Math.round((grey * 219) / 255 / LUMA_PER_SECOND);
}

/**
 * A valid task set (tasks-fixtures) whose task i has a time-coded video of
 * `durations[i]` seconds, so every task's request differs and frames can be checked.
 */
export async function writeTimecodedTaskSet(
  dir: string,
  durations: readonly number[],
  options: { sheetCount?: number; fps?: number } = {},
): Promise<{ jsonlPath: string; ids: number[]; taskDir: (id: number) => string }> {
  const [{ writeValidTaskSet }, { TASK_FILES }] = await Promise.all([import("./tasks-fixtures.ts"), import("../../src/tasks/layout.ts")]);
  const set = await writeValidTaskSet(dir, { count: durations.length, width: 160, height: 90, sheetCount: options.sheetCount ?? 1 });
  await Promise.all(
    set.ids.map((id, index) => makeTimecodedVideo(path.join(set.taskDir(id), TASK_FILES.video), { durationSec: durations[index] ?? 1, fps: options.fps ?? 2 })),
  );
  return { jsonlPath: set.jsonlPath, ids: set.ids, taskDir: set.taskDir };
}
