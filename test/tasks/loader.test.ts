import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { loadTaskSet, loadTasks } from "../../src/tasks/loader.ts";
import { formatProblem } from "../../src/tasks/problems.ts";
import { makeTestPng, type TaskSetFixture, taskLine, writeJsonl, writeValidTaskSet } from "../support/tasks-fixtures.ts";

let root: string;
let valid: TaskSetFixture;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "iwr-tasks-loader-"));
  valid = await writeValidTaskSet(path.join(root, "valid"), { count: 2, firstId: 7, name: "suite", sheetCount: 3, assetCount: 3 });
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("loading a valid task set", () => {
  it("splits every task into inputs (what a generator sees) and truth (what the evaluator sees)", async () => {
    const { tasks, problems, videos } = await loadTaskSet(valid.jsonlPath, { checkMedia: true });
    expect(problems).toEqual([]);
    expect(tasks.map((task) => task.id)).toEqual([7, 8]);
    const task = tasks[0]!;
    const dir = path.resolve(valid.taskDir(7));

    expect(task.inputs).toEqual({
      id: 7,
      videoPath: path.join(dir, "video.mp4"),
      assetSheetPaths: [1, 2, 3].map((n) => path.join(dir, "stitched_assets", `stitched_image_${n}.png`)),
      assetsDir: path.join(dir, "assets"),
      assetFiles: ["001.png", "002.png", "003.png"],
      resolution: { width: 320, height: 180 },
    });
    expect(task.truth.checkpointPaths).toEqual([0, 1, 2].map((k) => path.join(dir, "checkpoints", `step_${k}.png`)));
    expect(task.truth.actions.map((action) => action.type)).toEqual(["Click", "Type", "Scroll", "Press"]);
    expect(task.truth.actions[0]?.logical_assertion).toBe("A new row appears in the list");
    expect(task.meta).toEqual({
      id: 7,
      interactionComplexity: "L2",
      visualComplexity: "V1",
      domain: "productivity",
      subDomain: "todo",
      sourceWebsite: "fixture:7",
    });
    expect(videos.get(7)).toMatchObject({ durationSec: 2, width: 320, height: 180, fps: 5, frameCount: 10, codec: "h264" });
  });

  it("keeps the trajectory and checkpoints out of inputs", async () => {
    const [task] = await loadTasks(valid.jsonlPath);
    const inputs = task!.inputs;
    const serialized = JSON.stringify(inputs);
    for (const key of Object.keys(inputs)) expect(key).not.toMatch(/action|checkpoint|assertion|truth|step/i);
    expect(serialized).not.toMatch(/checkpoints|step_\d|action_sequence/);
    for (const action of task!.truth.actions) {
      if (action.logical_assertion) expect(serialized).not.toContain(action.logical_assertion);
      expect(serialized).not.toContain(action.parameters.description);
    }
    expect(Object.isFrozen(inputs)).toBe(true);
  });

  it("orders asset sheets by their number, not as text", async () => {
    const dir = path.join(root, "sheets");
    const set = await writeValidTaskSet(dir, { count: 1, name: "suite", sheetCount: 0 });
    const sheets = path.join(set.taskDir(1), "stitched_assets");
    await fs.mkdir(sheets, { recursive: true });
    for (const name of ["stitched_image_10.png", "stitched_image_2.png", "stitched_image.png", "stitched_image_1.png"]) {
      await makeTestPng(path.join(sheets, name));
    }
    const [task] = await loadTasks(set.jsonlPath);
    expect(task!.inputs.assetSheetPaths.map((file) => path.basename(file))).toEqual([
      "stitched_image.png",
      "stitched_image_1.png",
      "stitched_image_2.png",
      "stitched_image_10.png",
    ]);
  });

  it("accepts blank lines between tasks and Windows line ends", async () => {
    const dir = path.join(root, "blank-lines");
    const set = await writeValidTaskSet(dir, { count: 2, name: "suite" });
    await fs.writeFile(set.jsonlPath, `\r\n${JSON.stringify(taskLine(1))}\r\n\r\n   \r\n${JSON.stringify(taskLine(2))}\r\n\r\n`);
    expect((await loadTasks(set.jsonlPath)).map((task) => task.id)).toEqual([1, 2]);
  });
});

describe("a file with several problems", () => {
  it("reports all of them, in line order, and still returns the good tasks", async () => {
    const dir = path.join(root, "several");
    const set = await writeValidTaskSet(dir, { count: 4, name: "suite" });
    const tap = taskLine(1);
    tap.action_sequence[2]!.type = "Tap" as "Click";
    tap.recording_details!.resolution = "wide";
    await writeJsonl(set.jsonlPath, [tap, taskLine(2), taskLine(3), taskLine(2), taskLine(4)]);
    await fs.appendFile(set.jsonlPath, "{not json}\n");
    await fs.rm(path.join(set.taskDir(3), "video.mp4"));
    await fs.rm(path.join(set.taskDir(3), "assets"), { recursive: true });

    const { tasks, problems } = await loadTaskSet(set.jsonlPath);
    const file = set.jsonlPath;
    const task3 = set.taskDir(3);
    expect(problems.map(formatProblem)).toEqual([
      `${file}:1: recording_details.resolution: resolution must be 'WIDTHxHEIGHT', e.g. '1280x720', got 'wide'`,
      `${file}:1: action_sequence[2].type: expected one of Click|Type|Scroll|Press, got 'Tap'`,
      `${file}:3: ${task3}/video.mp4: the video is missing`,
      `${file}:3: ${task3}/assets: the assets folder is missing`,
      `${file}:4: id: id 2 is used twice (first on line 2)`,
      `${file}:6: not valid JSON: Expected property name or '}' at column 2`,
    ]);
    expect(problems[2]).toMatchObject({ line: 3, taskId: 3 });
    expect(tasks.map((task) => task.id)).toEqual([2, 4]);
  });

  it("loadTasks throws one TASK_INVALID error listing every problem", async () => {
    const dir = path.join(root, "strict");
    const set = await writeValidTaskSet(dir, { count: 2, name: "suite" });
    await fs.rm(path.join(set.taskDir(1), "checkpoints"), { recursive: true });
    await fs.rm(path.join(set.taskDir(2), "stitched_assets"), { recursive: true });

    const error = await loadTasks(set.jsonlPath).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IwrError);
    const iwrError = error as IwrError;
    expect(iwrError.code).toBe("TASK_INVALID");
    expect(iwrError.message.split("\n")).toEqual([
      `${set.jsonlPath}: 2 problems in the task file`,
      `${set.jsonlPath}:1: ${set.taskDir(1)}/checkpoints: the checkpoints folder is missing; ` +
        "expected 3 checkpoints (step_0.png..step_2.png: the initial state + 2 actions with visual_evaluation_flag)",
      `${set.jsonlPath}:2: ${set.taskDir(2)}/stitched_assets: the asset sheet folder is missing`,
    ]);
  });
});
