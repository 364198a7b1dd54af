/**
 * Issue #14 §4 on real Chromium: under the official profile actions run with the
 * harness's semantics — a button covered by another element still counts as clicked
 * (the JS click reaches it), an unknown key is pressed character by character and counts
 * as done, a Scroll that moves only the focused inner container does not count (the
 * harness measures window.scrollY) — and scrollbars are visible, as in its browser.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { type ActionInput, writeJsonl, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const MODEL = "page";
let dir: string;
let jsonlPath: string;
const output: string[] = [];

/**
 * Task 1: an Add button that a transparent overlay covers as soon as the pointer comes
 * near (after the element list was taken: the button is top-most then, and listed), a
 * Hidden button under a permanent overlay (never listed), a key box, and a focused scroll
 * pane inside a page that also scrolls.
 */
const COVERED = `<!doctype html><html><body style="margin:0;background:#fff;font:20px sans-serif">
<div id="wrap" style="position:relative;width:200px;height:60px">
  <button class="btn" id="add" style="position:absolute;left:10px;top:10px">Add</button>
  <div id="cover" style="position:absolute;inset:0;background:transparent;display:none"></div>
</div>
<div style="position:relative;width:200px;height:60px">
  <button class="btn" id="hidden" style="position:absolute;left:10px;top:10px">Hidden</button>
  <div style="position:absolute;inset:0;background:transparent"></div>
</div>
<p id="count">0 rows</p><p id="keys"></p>
<div id="pane" tabindex="0" style="height:120px;width:300px;overflow-y:auto"><div style="height:1000px">pane</div></div>
<div style="height:1500px"></div>
<script>
  let rows = 0;
  document.getElementById("add").onclick = () => { rows += 1; document.getElementById("count").textContent = rows + " rows"; };
  document.getElementById("wrap").addEventListener("mouseover", () => { document.getElementById("cover").style.display = "block"; });
  document.addEventListener("keydown", (event) => { document.getElementById("keys").textContent += event.key; });
  document.getElementById("pane").focus();
</script></body></html>`;

/** Task 2: a long white page (a scrollbar, when scrollbars show) that asks a CDN for a script. */
const TALL = `<!doctype html><html><body style="margin:0;background:#fff"><div style="height:3000px"></div>
<script>fetch("https://cdn.example.test/lib.js").catch(() => undefined);</script></body></html>`;

const task1Actions: ActionInput[] = [
  { type: "Click", parameters: { description: "the 'Add' button" }, logical_assertion: "", visual_evaluation_flag: false },
  { type: "Press", parameters: { description: "press the strange key", key: "xyz" }, logical_assertion: "", visual_evaluation_flag: false },
  { type: "Scroll", parameters: { description: "scroll down", direction: "down" }, logical_assertion: "", visual_evaluation_flag: false },
];
/** Task 3: the permanently covered button (the harness's list leaves it out, so the click fails). */
const task3Actions: ActionInput[] = [
  { type: "Click", parameters: { description: "the 'Hidden' button" }, logical_assertion: "", visual_evaluation_flag: false },
];
const task2Actions: ActionInput[] = [
  { type: "Scroll", parameters: { description: "scroll down", direction: "down" }, logical_assertion: "", visual_evaluation_flag: false },
];

const results = (profile: string) => path.join(dir, `results-${profile}`);
function writePage(profile: string, id: number, html: string): void {
  const folder = path.join(results(profile), String(id), MODEL);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, "index.html"), html);
}
const evaluate = (profile: string, ...args: string[]) =>
  runIwrCapturing(output, [
    "evaluate",
    "--data",
    jsonlPath,
    "--result",
    results(profile),
    "--model",
    MODEL,
    "--judge",
    "heuristic",
    "--grounding",
    "heuristic",
    "--no-trace",
    "--protocol",
    profile,
    ...args,
  ]);

/** Share of pixels that are not pure white in the rightmost 12 px of a screenshot (where a vertical scrollbar is drawn). */
async function rightEdgeInk(file: string): Promise<number> {
  const image = sharp(file);
  const { width, height } = await image.metadata();
  const { data, info } = await image
    .extract({ left: width! - 12, top: 0, width: 12, height: height! })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  let ink = 0;
  for (let i = 0; i < data.length; i += info.channels) if (data[i]! < 255 || data[i + 1]! < 255 || data[i + 2]! < 255) ink += 1;
  return ink / (info.width * info.height);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-official-actions-"));
  const set = await writeValidTaskSet(dir, { count: 3, name: "actions", width: 640, height: 360, actions: task1Actions.map((action) => ({ ...action })) });
  jsonlPath = set.jsonlPath;
  await writeJsonl(jsonlPath, [set.lines[0], { ...set.lines[1], action_sequence: task2Actions }, { ...set.lines[2], action_sequence: task3Actions }]);
  writePage("official", 1, COVERED);
  writePage("official", 3, COVERED);
  writePage("official", 2, TALL);
  writePage("corrected", 2, TALL);
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

afterAll(async () => {
  await closeSharedBrowser();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the harness's action semantics (official)", () => {
  it("clicks a button covered after it was listed, presses an unknown key, " +
    "does not count a scroll of the focused pane, and does not list a button under an overlay", async () => {
    expect(await evaluate("official"), output.join("\n")).toBe(0);
    const replay = JSON.parse(fs.readFileSync(path.join(results("official"), "1", MODEL, "replay.json"), "utf8")) as {
      steps: Array<{ ok: boolean; via?: string; reason?: string }>;
    };
    const [click, press, scroll] = replay.steps;
    expect(click).toMatchObject({ ok: true });
    expect(click?.via).toMatch(/^JS click \(the click failed: /);
    expect(press).toMatchObject({ ok: true });
    expect(press?.via).toMatch(/^character by character/);
    expect(scroll).toMatchObject({ ok: false });
    expect(scroll?.reason).toMatch(/scrolled div#pane; window\.scrollY moved by 0 px/);
    const record = readEvalRecord(path.join(results("official"), "1", MODEL, "eval.json"));
    expect(record.executedSteps).toBe(2);
    const covered = JSON.parse(fs.readFileSync(path.join(results("official"), "3", MODEL, "replay.json"), "utf8")) as {
      steps: Array<{ ok: boolean; reason?: string }>;
    };
    expect(covered.steps[0]).toMatchObject({ ok: false });
    expect(covered.steps[0]?.reason).toMatch(/grounding found no element for 'the 'Hidden' button'/);
    // The JS click did reach the button: its state after the click (evalpoint 1) differs from before.
    const [before, after] = [0, 1].map((index) => fs.readFileSync(path.join(results("official"), "1", MODEL, "evalpoints", `${index}.png`)));
    expect(after!.equals(before!)).toBe(false);
  }, 120_000);

  it("shows scrollbars under official and hides them under corrected; both count the requests the sandbox blocked", async () => {
    // Each profile's own evaluation of task 2 (official's is skipped when the first test already made it).
    expect(await evaluate("official", "--ids", "2"), output.join("\n")).toBe(0);
    expect(await evaluate("corrected", "--ids", "2"), output.join("\n")).toBe(0);
    const official = await rightEdgeInk(path.join(results("official"), "2", MODEL, "evalpoints", "0.png"));
    const corrected = await rightEdgeInk(path.join(results("corrected"), "2", MODEL, "evalpoints", "0.png"));
    expect(official).toBeGreaterThan(0.5);
    expect(corrected).toBe(0);
    for (const profile of ["official", "corrected"]) {
      expect(readEvalRecord(path.join(results(profile), "2", MODEL, "eval.json")).network).toEqual({ blockedRequests: 1 });
    }
    expect(readEvalRecord(path.join(results("official"), "1", MODEL, "eval.json")).network).toEqual({ blockedRequests: 0 });
  }, 120_000);
});
