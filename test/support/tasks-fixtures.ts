/**
 * Writes valid task sets in the official layout for tests: a real H.264 video made
 * by ffmpeg, real PNGs made by sharp, a task line that passes the schema. Tests that
 * need a broken set start from a valid one and break one thing.
 *
 *   const set = await writeValidTaskSet(dir, { count: 2 });
 *   const tasks = await loadTasks(set.jsonlPath);
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import type { z } from "zod";
import { findFfmpeg } from "../../src/setup/find-tools.ts";
import { checkpointFileName, TASK_FILES, taskDir, taskSetDir } from "../../src/tasks/layout.ts";
import { expectedCheckpointCount, type TaskLineSchema } from "../../src/tasks/schema.ts";

const run = promisify(execFile);

/** A task line as written to the .jsonl file. */
export type TaskLineInput = z.input<typeof TaskLineSchema>;
export type ActionInput = TaskLineInput["action_sequence"][number];

export interface TaskSetFixtureOptions {
  /** Number of tasks (default 1); ids run from `firstId` (default 1). */
  count?: number;
  firstId?: number;
  /** Base name of the .jsonl file and its folder (default "fixture"). */
  name?: string;
  /** Recording resolution, also the video's and the PNGs' size (default 320x180). */
  width?: number;
  height?: number;
  /** Video length in seconds at 5 fps (default 2). */
  videoSeconds?: number;
  /** The action sequence of every task (default: defaultActions()). */
  actions?: ActionInput[];
  /** Files in assets/ (default 2) and contact sheets in stitched_assets/ (default 1). */
  assetCount?: number;
  sheetCount?: number;
}

export interface TaskSetFixture {
  /** `<dir>/<name>.jsonl` */
  jsonlPath: string;
  /** `<dir>/<name>/` */
  setDir: string;
  /** The lines written, in order. */
  lines: TaskLineInput[];
  ids: number[];
  /** `<dir>/<name>/<id>/` */
  taskDir: (id: number) => string;
}

/** Four actions, two of them flagged for visual scoring: three checkpoints in all. */
export function defaultActions(): ActionInput[] {
  return [
    {
      type: "Click",
      parameters: { description: "the blue 'Add' button" },
      logical_assertion: "A new row appears in the list",
      visual_evaluation_flag: true,
    },
    {
      type: "Type",
      parameters: { description: "the search box at the top", text: "milk" },
      logical_assertion: "",
      visual_evaluation_flag: false,
    },
    {
      type: "Scroll",
      parameters: { description: "scroll down the page", direction: "down", scroll_page: true },
      logical_assertion: "The footer is visible",
      visual_evaluation_flag: true,
    },
    {
      type: "Press",
      parameters: { description: "press Enter to submit", key: "Enter" },
      logical_assertion: "The search results show 'milk'",
      visual_evaluation_flag: false,
    },
  ];
}

export function taskLine(id: number, options: TaskSetFixtureOptions = {}): TaskLineInput {
  return {
    id,
    classification: { interaction_complexity: "L2", visual_complexity: "V1", domain: "productivity", sub_domain: "todo" },
    recording_details: { resolution: `${options.width ?? 320}x${options.height ?? 180}`, environment: "test fixture" },
    source_website: `fixture:${id}`,
    action_sequence: options.actions ?? defaultActions(),
  };
}

/** A real H.264 mp4 of ffmpeg's test pattern. */
export async function makeTestVideo(file: string, options: { width?: number; height?: number; seconds?: number } = {}): Promise<void> {
  const ffmpeg = findFfmpeg();
  if (!ffmpeg) throw new Error("ffmpeg not found: run `npx iwr setup`");
  const size = `${options.width ?? 320}x${options.height ?? 180}`;
  await fs.mkdir(path.dirname(file), { recursive: true });
  await run(ffmpeg.path, [
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    `testsrc=size=${size}:rate=5`,
    "-t",
    String(options.seconds ?? 2),
    "-c:v",
    "libx264",
    "-pix_fmt",
    "yuv420p",
    file,
  ]);
}

/** A real PNG of one colour; `shade` varies it so files differ. */
export async function makeTestPng(file: string, options: { width?: number; height?: number; shade?: number } = {}): Promise<void> {
  const shade = (options.shade ?? 0) % 256;
  await fs.mkdir(path.dirname(file), { recursive: true });
  await sharp({
    create: { width: options.width ?? 320, height: options.height ?? 180, channels: 3, background: { r: shade, g: 128, b: 255 - shade } },
  })
    .png()
    .toFile(file);
}

export async function writeJsonl(file: string, lines: readonly unknown[]): Promise<void> {
  await fs.writeFile(file, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
}

/** Writes `<dir>/<name>.jsonl` and one complete, valid task folder per line. */
export async function writeValidTaskSet(dir: string, options: TaskSetFixtureOptions = {}): Promise<TaskSetFixture> {
  const name = options.name ?? "fixture";
  const count = options.count ?? 1;
  const firstId = options.firstId ?? 1;
  const width = options.width ?? 320;
  const height = options.height ?? 180;
  const jsonlPath = path.join(dir, `${name}.jsonl`);
  const ids = Array.from({ length: count }, (_, index) => firstId + index);
  const lines = ids.map((id) => taskLine(id, options));

  // One ffmpeg run per set; the other tasks get a copy.
  let firstVideo: string | undefined;
  for (const [index, id] of ids.entries()) {
    const folder = taskDir(jsonlPath, id);
    const videoPath = path.join(folder, TASK_FILES.video);
    if (firstVideo) {
      await fs.mkdir(folder, { recursive: true });
      await fs.copyFile(firstVideo, videoPath);
    } else {
      await makeTestVideo(videoPath, { width, height, seconds: options.videoSeconds ?? 2 });
      firstVideo = videoPath;
    }
    for (let sheet = 1; sheet <= (options.sheetCount ?? 1); sheet++) {
      await makeTestPng(path.join(folder, TASK_FILES.sheetsDir, `stitched_image_${sheet}.png`), { width, height, shade: sheet * 40 });
    }
    const assetCount = options.assetCount ?? 2;
    await fs.mkdir(path.join(folder, TASK_FILES.assetsDir), { recursive: true });
    for (let asset = 1; asset <= assetCount; asset++) {
      await makeTestPng(path.join(folder, TASK_FILES.assetsDir, `${String(asset).padStart(3, "0")}.png`), { width: 32, height: 32, shade: asset * 30 });
    }
    const checkpoints = expectedCheckpointCount(lines[index]?.action_sequence ?? []);
    for (let step = 0; step < checkpoints; step++) {
      await makeTestPng(path.join(folder, TASK_FILES.checkpointsDir, checkpointFileName(step)), { width, height, shade: 20 + step * 50 });
    }
  }
  await writeJsonl(jsonlPath, lines);
  return { jsonlPath, setDir: taskSetDir(jsonlPath), lines, ids, taskDir: (id) => taskDir(jsonlPath, id) };
}
