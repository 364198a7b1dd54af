/**
 * `npm run calibrate` scores every candidate under both pairings, and each pairing's
 * record has its own file from the results layout: eval.json (aligned, the first mode)
 * and eval.official.json beside it. runCalibration with its default modes is what the
 * script runs; here on one two-step fixture task, real Chromium and OCR. Its targets
 * name a task whose true page falls below the Final floor.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CALIBRATION_CANDIDATES,
  CALIBRATION_MODES,
  type CalibrationRow,
  calibrationProblems,
  referencePagePath,
  runCalibration,
} from "../../src/calibration/calibration.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { candidateFiles, evalFileForMode } from "../../src/results/layout.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir } from "../support/evaluator-replay-fixtures.ts";
import { writeValidTaskSet } from "../support/tasks-fixtures.ts";

let dir: string;
let resultDir: string;
let rows: CalibrationRow[];
let tasks: Task[];

beforeAll(async () => {
  dir = tempDir("calibration-files");
  resultDir = path.join(dir, "results");
  const set = await writeValidTaskSet(dir, SHOPPING_LIST_TASK_OPTIONS);
  tasks = await loadTasks(set.jsonlPath);
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

  it("names a task whose true page scores below the Final floor, with its visual marks", () => {
    // The same run, its true page's aligned record given another Final and OCR mark (IFS stays 1).
    const withReference = (final: number, ocrMean: number) =>
      rows.map((row) => {
        if (row.candidate !== "reference") return row;
        const records = row.evaluation.records.map((entry) =>
          entry.mode === "aligned" ? { ...entry, record: { ...entry.record, scores: { ...entry.record.scores, final, ocrMean } } } : entry,
        );
        return { ...row, evaluation: { ...row.evaluation, records } };
      });
    const belowFloor = (problems: string[]) => problems.filter((line) => / reached Final /.test(line));
    expect(belowFloor(calibrationProblems(tasks, withReference(0.97, 0.9)))).toEqual([]);
    const [named, ...more] = belowFloor(calibrationProblems(tasks, withReference(0.85, 0.3)));
    expect(more).toEqual([]);
    const marks = String.raw`against its own checkpoints OCR 30\.00 %, \S+ \d+\.\d\d %, MLLM \d+\.\d/100$`;
    expect(named).toMatch(new RegExp(String.raw`^reference of task ${tasks[0]!.id} reached Final 85\.00 % \(aligned\), below 90\.00 %: ` + marks));
  });
});
