/**
 * Bad input to the recorder: each case must fail with a precise message and leave no
 * trace — no task folder, no working folder, the jsonl byte for byte as before.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { main } from "../../src/cli/main.ts";
import { IwrError } from "../../src/errors.ts";
import { recordTask } from "../../src/recorder/record-task.ts";
import { writeTaskLine } from "../../src/tasks/writer.ts";
import { fixtureScript, listTree, makeScratchDir, RECORDER_SCRIPT, RECORDER_SITE, writeScript } from "../support/recorder-fixtures.ts";

/** Pacing only shapes the video; these cases fail before a video matters. */
const QUICK = { pauseBeforeMs: 50, pauseAfterMs: 600, pointerTravelMs: 40, keystrokeMs: 5 };

const scratch = makeScratchDir("bad");
let caseDir: string;
let jsonl: string;
let before: { jsonl: string; tree: string[] };

const EXISTING = {
  id: 1,
  classification: { interaction_complexity: "L1", visual_complexity: "V1", domain: "d" },
  recording_details: { resolution: "800x600" },
  source_website: "existing",
  action_sequence: [{ type: "Scroll", parameters: { description: "s" }, logical_assertion: "", visual_evaluation_flag: false }],
};

beforeEach((context) => {
  caseDir = fs.mkdtempSync(path.join(scratch, "case-"));
  jsonl = path.join(caseDir, "set.jsonl");
  writeTaskLine(jsonl, EXISTING);
  fs.mkdirSync(path.join(caseDir, "set", "1"), { recursive: true });
  before = { jsonl: fs.readFileSync(jsonl, "utf8"), tree: listTree(caseDir) };
  context.onTestFinished(() => {
    // The promise of every case: nothing written, nothing left behind.
    expect(fs.readFileSync(jsonl, "utf8")).toBe(before.jsonl);
    expect(listTree(caseDir)).toEqual(before.tree);
  });
});

afterAll(async () => {
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

async function failure(run: Promise<unknown>): Promise<IwrError> {
  try {
    await run;
  } catch (error) {
    if (error instanceof IwrError) return error;
    throw error;
  }
  throw new Error("expected the recording to fail");
}

describe("recorder bad input", () => {
  it("a locator matching nothing, after a successful step: names the step, the locator and the count", async () => {
    const script = fixtureScript();
    script.actions[1] = { ...script.actions[1], locator: "#no-such-field" };
    const file = writeScript(caseDir, "zero.yaml", { ...script, site: RECORDER_SITE });
    const error = await failure(recordTask({ script: file, data: jsonl, pacing: QUICK }));
    expect(error.code).toBe("RECORDER");
    expect(error.message).toMatch(/^step 2 \(Type "the name field"\): locator "#no-such-field" matched 0 elements; it must match exactly 1/);
    fs.rmSync(file);
  });

  it("a locator matching two elements", async () => {
    const script = fixtureScript();
    script.actions[0] = { ...script.actions[0], locator: "header img, footer img" };
    const file = writeScript(caseDir, "two.yaml", { ...script, site: RECORDER_SITE });
    const error = await failure(recordTask({ script: file, data: jsonl, pacing: QUICK }));
    expect(error.message).toMatch(/^step 1 \(Click "the green 'Show details' button"\): locator "header img, footer img" matched 2 elements/);
    fs.rmSync(file);
  });

  it("an id that already exists, without --force (through the CLI: exit code and message)", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const code = await main(["node", "iwr", "record", "--script", RECORDER_SCRIPT, "--data", jsonl, "--id", "1"]);
      expect(code).toBe(2);
      expect(printed.mock.calls.flat().join("\n")).toMatch(/iwr: CONFIG_INVALID: task id 1 already exists in .*set\.jsonl; pass --force to re-record it/);
    } finally {
      printed.mockRestore();
    }
  });

  it("an output folder that cannot be written", async () => {
    const blocker = path.join(caseDir, "a-file");
    fs.writeFileSync(blocker, "not a folder");
    before.tree = listTree(caseDir);
    const error = await failure(recordTask({ script: RECORDER_SCRIPT, data: path.join(blocker, "set.jsonl"), pacing: QUICK }));
    expect(error.code).toBe("IO");
    expect(error.message).toMatch(/cannot write the task folder under .*a-file\/set \(ENOTDIR\); choose a writable --data location/);
  });

  it("a site folder without index.html", async () => {
    const error = await failure(recordTask({ script: RECORDER_SCRIPT, site: caseDir, data: jsonl, id: 2, pacing: QUICK }));
    expect(error.message).toMatch(/the site failed to load: cannot read .*index\.html \(ENOENT\); --site must be a folder holding index\.html/);
  });

  it("a site URL that is not on 127.0.0.1", async () => {
    const error = await failure(recordTask({ script: RECORDER_SCRIPT, site: "https://example.com/", data: jsonl, id: 2 }));
    expect(error.message).toMatch(/only sites served from 127\.0\.0\.1 can be recorded/);
  });

  it("no ffmpeg", async () => {
    const saved = process.env.IWR_FFMPEG;
    process.env.IWR_FFMPEG = path.join(caseDir, "no-ffmpeg-here");
    try {
      const error = await failure(recordTask({ script: RECORDER_SCRIPT, data: jsonl, id: 2 }));
      expect(error.code).toBe("SETUP_MISSING");
      expect(error.message).toMatch(/ffmpeg not found \(IWR_FFMPEG=.*no-ffmpeg-here is not an executable\): run `npx iwr setup` or set IWR_FFMPEG/);
    } finally {
      if (saved === undefined) delete process.env.IWR_FFMPEG;
      else process.env.IWR_FFMPEG = saved;
    }
  });
});
