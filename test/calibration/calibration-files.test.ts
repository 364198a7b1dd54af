/**
 * `npm run calibrate` scores every candidate under both pairings, and each pairing's
 * record has its own file from the results layout: eval.json (aligned, the first mode)
 * and eval.official.json beside it. runCalibration with its default modes is what the
 * script runs; here on one two-step fixture task, real Chromium and OCR.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALIBRATION_CANDIDATES, CALIBRATION_MODES, type CalibrationRow, referencePagePath, runCalibration } from "../../src/calibration/calibration.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { candidateFiles, evalFileForMode } from "../../src/results/layout.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir } from "../support/evaluator-replay-fixtures.ts";
import { writeValidTaskSet } from "../support/tasks-fixtures.ts";

let dir: string;
let resultDir: string;
let rows: CalibrationRow[];

beforeAll(async () => {
  dir = tempDir("calibration-files");
  resultDir = path.join(dir, "results");
  const set = await writeValidTaskSet(dir, SHOPPING_LIST_TASK_OPTIONS);
  const tasks = await loadTasks(set.jsonlPath);
  for (const task of tasks) {
    fs.mkdirSync(path.dirname(referencePagePath(task)), { recursive: true });
    fs.writeFileSync(referencePagePath(task), shoppingListPage());
  }
  rows = await runCalibration({ tasks, resultDir, workers: 1 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("calibration records", () => {
  it("scores under both pairings by default, aligned first", () => {
    expect(CALIBRATION_MODES).toEqual(["aligned", "official"]);
    expect(rows.map((row) => row.candidate).sort()).toEqual([...CALIBRATION_CANDIDATES].sort());
    for (const row of rows) expect(row.evaluation.records.map((entry) => entry.mode)).toEqual(["aligned", "official"]);
  });

  it.each(CALIBRATION_CANDIDATES)("writes %s's eval.json (aligned) and eval.official.json, each the record of its pairing", (candidate) => {
    const row = rows.find((entry) => entry.candidate === candidate)!;
    const files = candidateFiles(row.candidateDir);
    const aligned = readEvalRecord(files.eval);
    const official = readEvalRecord(path.join(files.dir, evalFileForMode("official")));
    expect(aligned.settings.pairingMode).toBe("aligned");
    expect(official.settings.pairingMode).toBe("official");
    expect(aligned.scores).toEqual(row.evaluation.records.find((entry) => entry.mode === "aligned")!.record.scores);
    expect(official.scores).toEqual(row.evaluation.records.find((entry) => entry.mode === "official")!.record.scores);
    // The first mode's record is eval.json itself, never a second copy under its mode's name.
    expect(fs.existsSync(path.join(files.dir, evalFileForMode("aligned")))).toBe(false);
  });
});
