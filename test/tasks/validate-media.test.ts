/**
 * What later steps need, checked when a task set is validated: the whole video decodes
 * (a truncated file is named, and generation refuses it too), checkpoints are non-empty
 * readable images (another size is a warning, listed apart), one resolution limit with
 * the evaluator; a task file that is not UTF-8 text gets one message, not thousands.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.ts";
import { sampleFrames } from "../../src/media/frames.ts";
import { findFfmpeg } from "../../src/setup/find-tools.ts";
import { loadTaskSet } from "../../src/tasks/loader.ts";
import { formatProblem } from "../../src/tasks/problems.ts";
import { makeTestPng, taskLine, writeJsonl, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const run = promisify(execFile);
let dir: string;
let caseNumber = 0;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-validate-media-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

async function freshSet() {
  return writeValidTaskSet(path.join(dir, `case-${++caseNumber}`), { count: 2 });
}

/** A 19 s H.264 video with its header first (as the recorder writes it), cut to its first 12 kB. */
async function truncatedVideo(file: string): Promise<void> {
  const ffmpeg = findFfmpeg()!.path;
  const whole = `${file}.whole.mp4`;
  await run(ffmpeg, [
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    "testsrc=size=320x180:rate=10",
    "-t",
    "19",
    "-c:v",
    "libx264",
    "-pix_fmt",
    "yuv420p",
    "-movflags",
    "+faststart",
    whole,
  ]);
  fs.writeFileSync(file, fs.readFileSync(whole).subarray(0, 12_000));
  fs.rmSync(whole);
}

async function validate(jsonl: string): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => lines.push(String(chunk)) > 0);
  const code = await main(["node", "iwr", "--quiet", "tasks", "validate", jsonl]);
  vi.restoreAllMocks();
  return { code, out: lines.join("") };
}

describe("video", () => {
  it("a truncated MP4 whose header reads fine is named by validate, and generation refuses to sample it", async () => {
    const set = await freshSet();
    const video = path.join(set.taskDir(1), "video.mp4");
    await truncatedVideo(video);
    const { code, out } = await validate(set.jsonlPath);
    expect(code).toBe(1);
    expect(out).toMatch(
      new RegExp(`${video.replace(/[.]/g, "\\.")}: the video decodes only to \\d+\\.\\d s of its stated 19\\.0 s \\(\\d+ frames\\): truncated or damaged`),
    );
    expect(out).toMatch(/1 problem in .*; 1 task OK/);
    await expect(sampleFrames(video)).rejects.toThrow(/decodes only to about \d+\.\d s of its stated 19\.0 s: \d+ of 19 frames/);
  });
});

describe("checkpoints", () => {
  it("an empty checkpoint is a problem even in the quick check runs use", async () => {
    const set = await freshSet();
    const checkpoint = path.join(set.taskDir(2), "checkpoints", "step_1.png");
    fs.writeFileSync(checkpoint, "");
    const loaded = await loadTaskSet(set.jsonlPath, { checkMedia: false });
    expect(loaded.problems.map(formatProblem)).toEqual([`${set.jsonlPath}:2: ${checkpoint}: the checkpoint is empty (0 bytes)`]);
  });

  it("a checkpoint that does not decode whole is a problem; one of another size is a warning, listed apart", async () => {
    const set = await freshSet();
    const broken = path.join(set.taskDir(1), "checkpoints", "step_1.png");
    const png = fs.readFileSync(broken);
    fs.writeFileSync(broken, png.subarray(0, Math.floor(png.length / 2)));
    const resized = path.join(set.taskDir(2), "checkpoints", "step_2.png");
    await makeTestPng(resized, { width: 300, height: 100 });
    const { code, out } = await validate(set.jsonlPath);
    expect(code).toBe(1);
    expect(out).toContain(`${broken}: not a readable image`);
    expect(out).toContain(`warning: ${set.jsonlPath}:2: ${resized}: 300x100, not the task's resolution 320x180`);
    expect(out).toMatch(/1 problem in .*; 1 task OK/);
  });

  it("warnings alone do not fail validation", async () => {
    const set = await freshSet();
    await makeTestPng(path.join(set.taskDir(1), "checkpoints", "step_0.png"), { width: 321, height: 180 });
    const { code, out } = await validate(set.jsonlPath);
    expect(code).toBe(0);
    expect(out).toMatch(/^1 warning:\n {2}warning: .*step_0\.png: 321x180/m);
    expect(out).toMatch(/2 tasks OK \(1 warning\)/);
  });
});

describe("resolution and file encoding", () => {
  it("a resolution above the evaluator's limit is refused by the same limit", async () => {
    const set = await freshSet();
    await writeJsonl(set.jsonlPath, [{ ...taskLine(1), recording_details: { resolution: "9000x100" } }, taskLine(2)]);
    const loaded = await loadTaskSet(set.jsonlPath);
    expect(loaded.problems.map(formatProblem)).toEqual([
      `${set.jsonlPath}:1: recording_details.resolution: resolution: each side must be at most 8192 px (the largest page the evaluator opens), got '9000x100'`,
    ]);
  });

  it("a UTF-16 or binary task file is one message, not one per line", async () => {
    const set = await freshSet();
    const text = fs.readFileSync(set.jsonlPath, "utf8");
    fs.writeFileSync(set.jsonlPath, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]));
    expect((await loadTaskSet(set.jsonlPath)).problems.map(formatProblem)).toEqual([
      `${set.jsonlPath}: the file is UTF-16 text; save it as UTF-8 (one JSON object per line)`,
    ]);
    const binary = Buffer.alloc(200_000);
    for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919) % 256;
    fs.writeFileSync(set.jsonlPath, binary);
    const problems = (await loadTaskSet(set.jsonlPath)).problems.map(formatProblem);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/the file is not text \(a NUL byte at offset \d+\); expected UTF-8 JSON lines/);
  });

  it("many lines that are not JSON are listed up to 20, the rest counted", async () => {
    const set = await freshSet();
    fs.writeFileSync(set.jsonlPath, Array.from({ length: 300 }, (_, i) => `line ${i} is prose`).join("\n"));
    const problems = (await loadTaskSet(set.jsonlPath)).problems.map(formatProblem);
    expect(problems).toHaveLength(21);
    expect(problems[0]).toBe(`${set.jsonlPath}: 280 more line(s) are not valid JSON either (300 of 300); is this a task file?`);
  });
});

describe("the bundled suite", () => {
  it("passes the whole validation npm start runs first, media included", async () => {
    const { tasks, problems } = await loadTaskSet("tasks/iwr-mini.jsonl", { checkMedia: true });
    expect(problems.map(formatProblem)).toEqual([]);
    expect(tasks.length).toBe(12);
  }, 120_000);
});
