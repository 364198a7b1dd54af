/**
 * Records the fixture site end to end with real Chromium and ffmpeg, then checks the
 * task with the tasks loader/validator, ffprobe, sharp and OCR, and replays the same
 * actions in a plain browser to show the checkpoints are what the evaluator will see.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLOCK_START_MS, DEFAULT_RANDOM_SEED } from "../../src/browser/determinism.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { startStaticServer } from "../../src/browser/static-server.ts";
import { probeVideo } from "../../src/media/probe.ts";
import { readImageText, shutdownOcr } from "../../src/metrics/ocr.ts";
import { PROTOCOL } from "../../src/protocol.ts";
import { type RecordedTask, recordTask } from "../../src/recorder/record-task.ts";
import { ASSET_PLACEHOLDER } from "../../src/tasks/inputs.ts";
import { loadTaskSet } from "../../src/tasks/loader.ts";
import { listTree, makeScratchDir, RECORDER_SCRIPT, RECORDER_SITE } from "../support/recorder-fixtures.ts";

const scratch = makeScratchDir("e2e");
const jsonl = path.join(scratch, "suite.jsonl");
let recorded: RecordedTask;

beforeAll(async () => {
  recorded = await recordTask({ script: RECORDER_SCRIPT, data: jsonl });
});

afterAll(async () => {
  await closeSharedBrowser();
  await shutdownOcr();
  fs.rmSync(scratch, { recursive: true, force: true });
});

function sha256(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** Mean absolute difference per channel (0..255) of two same-size images. */
async function meanDifference(a: Buffer | string, b: Buffer | string): Promise<number> {
  const [left, right] = await Promise.all([
    sharp(a).removeAlpha().raw().toBuffer({ resolveWithObject: true }),
    sharp(b).removeAlpha().raw().toBuffer({ resolveWithObject: true }),
  ]);
  expect([left.info.width, left.info.height]).toEqual([right.info.width, right.info.height]);
  let total = 0;
  for (let index = 0; index < left.data.length; index++) total += Math.abs(left.data[index]! - right.data[index]!);
  return total / left.data.length;
}

describe("iwr record on the fixture site", () => {
  it("writes a task the loader accepts, with its line in the jsonl and nothing else beside it", async () => {
    const set = await loadTaskSet(jsonl, { checkMedia: true });
    expect(set.problems).toEqual([]);
    expect(set.tasks.map((task) => task.id)).toEqual([1]);
    expect(recorded.dir).toBe(path.join(scratch, "suite", "1"));
    expect(listTree(path.join(scratch, "suite"))).toEqual(["1", ...listTree(recorded.dir).map((entry) => path.join("1", entry))]);
    expect(listTree(recorded.dir)).toEqual([
      "assets",
      "assets/001.png",
      "assets/002.jpg",
      "assets/003.png",
      "checkpoints",
      "checkpoints/step_0.png",
      "checkpoints/step_1.png",
      "checkpoints/step_2.png",
      "recording.json",
      // The site's files beside the reference page: its images too, for any URL built in script.
      "reference",
      "reference/img",
      "reference/img/logo-copy.png",
      "reference/img/logo.png",
      "reference/img/photo.jpg",
      "reference/img/tile.png",
      "reference/index.html",
      // The page at rest after every action (truth, like the checkpoints).
      "states",
      "states/action_1.png",
      "states/action_2.png",
      "states/action_3.png",
      "stitched_assets",
      "stitched_assets/stitched_image_1.png",
      "video.mp4",
    ]);
    const line = JSON.parse(fs.readFileSync(jsonl, "utf8").trim()) as Record<string, unknown>;
    expect(line).toEqual({
      id: 1,
      classification: { interaction_complexity: "L2", visual_complexity: "V1", domain: "testing", sub_domain: "recorder" },
      recording_details: { resolution: "800x600", environment: "Chromium headless, recorded by iwr record" },
      source_website: "fixture:recorder-site",
      // Always recorded in deterministic mode: the default seed and clock start.
      determinism: { random_seed: DEFAULT_RANDOM_SEED, clock_start: new Date(DEFAULT_CLOCK_START_MS).toISOString() },
      action_sequence: [
        {
          type: "Click",
          parameters: { description: "the green 'Show details' button" },
          logical_assertion: "A panel asking for the user's name appears below the button",
          visual_evaluation_flag: true,
          checkpoint_screenshot: "step_1.png",
        },
        {
          type: "Type",
          parameters: { description: "the 'Your name' text field in the panel", text: "Ada" },
          logical_assertion: "The field shows 'Ada'",
          visual_evaluation_flag: false,
        },
        {
          type: "Press",
          parameters: { description: "confirm the name", key: "Enter" },
          logical_assertion: "A greeting 'Hello, Ada!' appears under the field",
          visual_evaluation_flag: true,
          // Where the key went when recorded: the field just typed into.
          key_focus: { on: "element", tag: "input", id: "name", label: "Your name" },
          checkpoint_screenshot: "step_2.png",
        },
      ],
    });
  });

  it("records a paced H.264 yuv420p constant-rate video at the task's resolution", async () => {
    const video = await probeVideo(path.join(recorded.dir, "video.mp4"));
    expect(video.codec).toBe("h264");
    expect(video.pixFmt).toBe("yuv420p");
    expect([video.width, video.height]).toEqual([800, 600]);
    // Settle + 3 actions, each with ≥1 s still before and after: well over 6 s.
    expect(video.durationSec).toBeGreaterThan(PROTOCOL.initialSettleMs / 1000 + 3 * 2);
    expect(video.frameCount).toBeGreaterThanOrEqual(Math.floor(video.durationSec));
    expect(video.frameCount! / video.durationSec).toBeCloseTo(video.fps, 0);
    expect(recorded.timings.msPerAction).toBeGreaterThan(2000);
  });

  it("keeps each loaded image once, renamed in first-load order", () => {
    const site = (name: string): string => sha256(path.join(RECORDER_SITE, "img", name));
    const asset = (name: string): string => sha256(path.join(recorded.dir, "assets", name));
    // logo.png and logo-copy.png have the same bytes: one asset, reached from both URLs.
    expect(asset("001.png")).toBe(site("logo.png"));
    expect(site("logo-copy.png")).toBe(site("logo.png"));
    expect(asset("002.jpg")).toBe(site("photo.jpg"));
    expect(asset("003.png")).toBe(site("tile.png"));
    expect(
      recorded.assets
        .find((entry) => entry.name === "001.png")!
        .urls.map((url) => new URL(url).pathname)
        .sort(),
    ).toEqual(["/img/logo-copy.png", "/img/logo.png"]);
  });

  it("labels every asset on the contact sheet, readable by OCR", async () => {
    const sheet = path.join(recorded.dir, "stitched_assets", "stitched_image_1.png");
    const meta = await sharp(sheet).metadata();
    expect(meta.width).toBe(1280);
    const text = await readImageText(fs.readFileSync(sheet));
    for (const name of ["001.png", "002.jpg", "003.png"]) expect(text).toContain(name);
  });

  it("writes a reference page that names only placeholder assets and renders like the site", async () => {
    const html = fs.readFileSync(path.join(recorded.dir, "reference", "index.html"), "utf8");
    expect(html).not.toMatch(/img\/(logo|logo-copy|photo|tile)\.(png|jpg)/);
    for (const name of ["001.png", "002.jpg", "003.png"]) expect(html).toContain(`${ASSET_PLACEHOLDER}/${name}`);
    // Resolve the placeholder the way a candidate's is resolved, then compare with step_0.
    fs.writeFileSync(path.join(recorded.dir, "reference", "resolved.html"), html.replaceAll(`${ASSET_PLACEHOLDER}/`, "../assets/"));
    const server = await startStaticServer(recorded.dir);
    const context = await (await sharedBrowser()).newContext({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1 });
    try {
      const page = await context.newPage();
      await page.goto(server.url("reference/resolved.html"), { waitUntil: "load" });
      await page.waitForTimeout(PROTOCOL.initialSettleMs);
      const shot = await page.screenshot();
      expect(await meanDifference(shot, path.join(recorded.dir, "checkpoints", "step_0.png"))).toBeLessThan(0.5);
    } finally {
      await context.close();
      await server.close();
      fs.rmSync(path.join(recorded.dir, "reference", "resolved.html"));
    }
  });

  it("takes checkpoints that match a plain replay of the actions (no cursor, evaluator timings)", async () => {
    const server = await startStaticServer(RECORDER_SITE);
    const context = await (await sharedBrowser()).newContext({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1 });
    try {
      const page = await context.newPage();
      await page.goto(server.url("index.html"), { waitUntil: "load" });
      await page.waitForTimeout(PROTOCOL.initialSettleMs);
      const shots = [await page.screenshot()];
      await page.click("#toggle");
      await page.waitForTimeout(PROTOCOL.actionSettleMs);
      shots.push(await page.screenshot());
      await page.fill("#name", "Ada");
      await page.keyboard.press("Enter");
      await page.waitForTimeout(PROTOCOL.actionSettleMs);
      shots.push(await page.screenshot());
      for (const [step, shot] of shots.entries()) {
        expect(await meanDifference(shot, path.join(recorded.dir, "checkpoints", `step_${step}.png`))).toBeLessThan(0.5);
      }
      // And the states differ from each other: the checkpoints really follow the actions.
      expect(await meanDifference(shots[0]!, shots[1]!)).toBeGreaterThan(1);
    } finally {
      await context.close();
      await server.close();
    }
  });

  it("re-records the same id only with force, reproducing the line and the checkpoints", async () => {
    const lineBefore = fs.readFileSync(jsonl, "utf8");
    const checkpointsBefore = [0, 1, 2].map((step) => fs.readFileSync(path.join(recorded.dir, "checkpoints", `step_${step}.png`)));
    await expect(recordTask({ script: RECORDER_SCRIPT, data: jsonl, id: 1 })).rejects.toThrow(/task id 1 already exists in .*suite\.jsonl; pass --force/);
    expect(fs.readFileSync(jsonl, "utf8")).toBe(lineBefore);

    const again = await recordTask({ script: RECORDER_SCRIPT, data: jsonl, id: 1, force: true });
    expect(fs.readFileSync(jsonl, "utf8")).toBe(lineBefore);
    for (const [step, before] of checkpointsBefore.entries()) {
      expect(await meanDifference(before, path.join(again.dir, "checkpoints", `step_${step}.png`))).toBeLessThan(0.5);
    }
    expect(fs.readdirSync(path.join(scratch, "suite"))).toEqual(["1"]);
  });
});
