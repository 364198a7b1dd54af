/**
 * Deterministic mode (#15): a page that draws its state with Math.random and reads the
 * clock is recorded with a seed, and its reference page evaluated three times with the
 * task's seed gives identical eval.json scores, all steps passing. Recording it again
 * with the same seed gives the same checkpoints; another seed gives others (the seed
 * is what pins them). Under the official profile a
 * model's page is replayed unseeded, and eval.json says which it did.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDeterminism } from "../../src/browser/determinism.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { writeCalibrationCandidate } from "../../src/calibration/calibration.ts";
import { closeEvaluator, createEvaluator } from "../../src/evaluator/create-evaluator.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { type Evaluator, evaluateTask, replayDeterminism } from "../../src/evaluator/evaluate-task.ts";
import { type RecordedTask, recordTask } from "../../src/recorder/record-task.ts";
import { candidateFiles } from "../../src/results/layout.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { makeScratchDir, writeScript } from "../support/recorder-fixtures.ts";

const QUICK = { pauseBeforeMs: 50, pauseAfterMs: 600, pointerTravelMs: 40, keystrokeMs: 5 };
const scratch = makeScratchDir("deterministic");

/** Five tiles in random colours, a random roll and the weekday from the clock; "Roll" draws again. */
const RANDOM_PAGE = `<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; padding: 24px; font-family: sans-serif; background: #fff; }
.tile { display: inline-block; width: 100px; height: 100px; margin: 6px; }
#roll { font-size: 40px; margin: 16px 0; }
</style></head><body>
<img src="img/die.png" width="48" height="48" alt="die">
<div id="tiles"></div><div id="roll"></div><div id="day"></div>
<button id="again" type="button" style="font-size: 24px">Roll</button>
<script>
  function draw() {
    const tiles = document.getElementById("tiles");
    tiles.innerHTML = "";
    for (let i = 0; i < 5; i++) {
      const tile = document.createElement("div");
      tile.className = "tile";
      tile.style.background = "hsl(" + Math.floor(Math.random() * 360) + ", 70%, 50%)";
      tiles.appendChild(tile);
    }
    document.getElementById("roll").textContent = "Roll: " + (1 + Math.floor(Math.random() * 1000));
  }
  document.getElementById("day").textContent = "Day: " + ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][new Date().getUTCDay()];
  draw();
  document.getElementById("again").addEventListener("click", draw);
</script></body></html>`;

const SCRIPT = {
  source_website: "fixture:random-page",
  classification: { interaction_complexity: "L2", visual_complexity: "V2", domain: "testing" },
  resolution: "800x600",
  actions: [
    { type: "Click", locator: "#again", description: "the 'Roll' button", assertion: "The tiles changed colour", visual: true },
    { type: "Click", locator: "#again", description: "the 'Roll' button", assertion: "The tiles changed colour", visual: true },
    { type: "Click", locator: "#again", description: "the 'Roll' button", assertion: "The tiles changed colour", visual: true },
  ],
};

async function recordWithSeed(label: string, seed: number): Promise<{ recorded: RecordedTask; task: Task }> {
  const caseDir = fs.mkdtempSync(path.join(scratch, `${label}-`));
  const siteDir = path.join(caseDir, "site");
  fs.mkdirSync(path.join(siteDir, "img"), { recursive: true });
  fs.writeFileSync(path.join(siteDir, "index.html"), RANDOM_PAGE);
  await sharp({ create: { width: 48, height: 48, channels: 3, background: "#111827" } })
    .png()
    .toFile(path.join(siteDir, "img", "die.png"));
  const jsonl = path.join(caseDir, "set.jsonl");
  const recorded = await recordTask({ script: writeScript(caseDir, "actions.yaml", SCRIPT), site: siteDir, data: jsonl, pacing: QUICK, seed });
  return { recorded, task: (await loadTasks(jsonl))[0]! };
}

let evaluator: Evaluator;
let seeded: { recorded: RecordedTask; task: Task };

beforeAll(async () => {
  seeded = await recordWithSeed("seed-7", 7);
  evaluator = await createEvaluator({ judge: "heuristic", grounding: "heuristic", workers: 1, trace: false });
});

afterAll(async () => {
  await closeEvaluator();
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe("deterministic mode", () => {
  it("starts every document's clock at the clock start, lets it run, and repeats Math.random's sequence per seed", async () => {
    const browser = await sharedBrowser();
    const clockStartMs = Date.UTC(2025, 0, 15, 9, 0, 0);
    const readPage = async (seed: number) => {
      const opened = Date.now();
      const context = await browser.newContext({ timezoneId: "UTC" });
      try {
        await installDeterminism(context, { randomSeed: seed, clockStartMs });
        const page = await context.newPage();
        await page.setContent("<p>clock</p>");
        const read = await page.evaluate(async () => {
          const first = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 120));
          return {
            first,
            iso: new Date().toISOString(),
            called: Date(),
            elapsed: Date.now() - first,
            randoms: [Math.random(), Math.random(), Math.random()],
            parsed: new Date(0).getTime(),
          };
        });
        // How long the page could have lived, as this process's clock saw it.
        return { ...read, spanMs: Date.now() - opened };
      } finally {
        await context.close();
      }
    };
    const [a, b, c] = [await readPage(7), await readPage(7), await readPage(8)];
    // The document's clock starts at the clock start when the document is made; the page's
    // script reads it after the page loaded, a few seconds later on a loaded machine at most.
    expect(a.iso).toMatch(/^2025-01-15T09:00:0\d/);
    expect(a.called).toMatch(/^Wed Jan 15 2025 09:00:0\d/);
    expect(a.elapsed).toBeGreaterThanOrEqual(100);
    // The page's clock ran from the clock start no faster than real time: every reading
    // falls between the start and the start plus the page's whole life.
    expect(a.first - clockStartMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(a.iso) - clockStartMs).toBeGreaterThanOrEqual(100);
    expect(Date.parse(a.iso) - clockStartMs).toBeLessThanOrEqual(a.spanMs + 50);
    expect(a.elapsed).toBeLessThanOrEqual(a.spanMs + 50);
    expect(a.parsed).toBe(0);
    expect(b.randoms).toEqual(a.randoms);
    expect(c.randoms).not.toEqual(a.randoms);
  });

  it("stores the seed and clock start in the task line, and the loader reads them", () => {
    expect(seeded.recorded.line.determinism).toEqual({ random_seed: 7, clock_start: "2025-01-15T09:00:00.000Z" });
    expect(seeded.task.truth.determinism).toEqual({ randomSeed: 7, clockStartMs: Date.UTC(2025, 0, 15, 9, 0, 0) });
  });

  it("evaluates the random page three times with identical scores, every step passing", async () => {
    const candidateDir = writeCalibrationCandidate(seeded.task, path.join(scratch, "results"), "reference");
    const runs = [];
    for (let run = 0; run < 3; run++) {
      await evaluateTask({ task: seeded.task, candidateDir, model: "reference", pairingModes: ["aligned"], evaluator, replace: true, calibration: true });
      const record = readEvalRecord(candidateFiles(candidateDir).eval);
      expect(record.determinism).toMatchObject({ seeded: true, randomSeed: 7, clockStart: "2025-01-15T09:00:00.000Z" });
      runs.push({ scores: record.scores, lists: record.lists, verdicts: record.assertions.map((assertion) => assertion.result) });
    }
    expect(runs[0]!.scores.ifs).toBe(1);
    expect(runs[0]!.verdicts).toEqual(["Yes", "Yes", "Yes"]);
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[2]).toEqual(runs[0]);
  });

  it("records the same states again with the same seed, and different ones with another", async () => {
    const again = await recordWithSeed("seed-7-again", 7);
    const other = await recordWithSeed("seed-8", 8);
    for (const [index, checkpoint] of seeded.task.truth.checkpointPaths.entries()) {
      const first = await sharp(checkpoint).raw().toBuffer();
      expect((await sharp(again.task.truth.checkpointPaths[index]!).raw().toBuffer()).equals(first), `step_${index} with seed 7 twice`).toBe(true);
      expect((await sharp(other.task.truth.checkpointPaths[index]!).raw().toBuffer()).equals(first), `step_${index} with seeds 7 and 8`).toBe(false);
    }
  });

  it("replays a model's page unseeded under the official profile, and says so; seeded under corrected and for calibration", () => {
    expect(replayDeterminism(seeded.task, "official", false)).toEqual({
      seeded: false,
      reason: "official profile: a model's page is replayed unseeded, as the harness does",
    });
    expect(replayDeterminism(seeded.task, "official", true)).toMatchObject({ seeded: true, randomSeed: 7 });
    expect(replayDeterminism(seeded.task, "corrected", false)).toMatchObject({ seeded: true, randomSeed: 7 });
    const { determinism: _, ...unseededTruth } = seeded.task.truth;
    expect(replayDeterminism({ ...seeded.task, truth: unseededTruth }, "corrected", false)).toMatchObject({
      seeded: false,
      reason: expect.stringMatching(/names no seed/),
    });
  });
});
