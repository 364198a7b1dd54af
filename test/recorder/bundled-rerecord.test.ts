/**
 * The bundled suite is reproducible: re-recording one of its tasks from its site and
 * script gives the committed task line again, and checkpoints that match the
 * committed ones within a small pixel tolerance (font rasterisation may differ by a
 * few levels between machines; a different page state differs by far more).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CLOCK_START_MS, DEFAULT_RANDOM_SEED } from "../../src/browser/determinism.ts";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { recordTask } from "../../src/recorder/record-task.ts";
import { loadTaskSet } from "../../src/tasks/loader.ts";

const SUITE = path.resolve("tasks/iwr-mini.jsonl");
/** merge: the shortest bundled task, all Press actions, four flagged checkpoints. */
const TASK_ID = 10;
const SCRIPT = path.resolve("tasks/scripts/merge.yaml");
/** Mean absolute difference per channel, in 0..255 levels. */
const TOLERANCE_LEVELS = 1.5;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-rerecord-"));

afterAll(async () => {
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

async function meanDifference(a: string, b: string): Promise<number> {
  const [left, right] = await Promise.all([a, b].map((file) => sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true })));
  expect([left!.info.width, left!.info.height]).toEqual([right!.info.width, right!.info.height]);
  let total = 0;
  for (let index = 0; index < left!.data.length; index++) total += Math.abs(left!.data[index]! - right!.data[index]!);
  return total / left!.data.length;
}

describe("re-recording a bundled task", () => {
  it("reproduces the committed task line and checkpoints", async () => {
    const committed = (await loadTaskSet(SUITE)).tasks.find((task) => task.id === TASK_ID);
    expect(committed, `task ${TASK_ID} in ${SUITE}`).toBeDefined();

    // Short pauses: pacing shapes the video only; checkpoints use the protocol's settle times.
    const rerecorded = await recordTask({
      script: SCRIPT,
      data: path.join(scratch, "suite.jsonl"),
      id: TASK_ID,
      pacing: { pauseBeforeMs: 100, pauseAfterMs: 600, pointerTravelMs: 50, keystrokeMs: 10 },
    });

    expect(rerecorded.line).toEqual(committed!.line);
    // Recorded in deterministic mode, like every task since: the default seed and clock start.
    expect(committed!.line.determinism).toEqual({ random_seed: DEFAULT_RANDOM_SEED, clock_start: new Date(DEFAULT_CLOCK_START_MS).toISOString() });
    const fresh = fs.readdirSync(path.join(rerecorded.dir, "checkpoints")).sort();
    expect(fresh).toEqual(committed!.truth.checkpointPaths.map((file) => path.basename(file)).sort());
    for (const file of committed!.truth.checkpointPaths) {
      const difference = await meanDifference(file, path.join(rerecorded.dir, "checkpoints", path.basename(file)));
      expect(difference, path.basename(file)).toBeLessThan(TOLERANCE_LEVELS);
    }
  });
});
