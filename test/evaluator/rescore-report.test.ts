/**
 * From scored pairs to eval.json to the metrics report, and back again through
 * rescore — also for an eval.json written by the official Python harness.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEvalRecord, type EvalRecord, type EvalSettings, readEvalRecord, writeEvalRecord } from "../../src/evaluator/eval-record.ts";
import { pairEvalpoints } from "../../src/evaluator/pairing.ts";
import { renderMetricsMarkdown } from "../../src/evaluator/report-md.ts";
import { readHarnessEval, rescore } from "../../src/evaluator/rescore.ts";
import { createVisualScorers, scoreVisualPairs, shutdownVisualScorers, visualSettings } from "../../src/evaluator/visual-scorers.ts";
import { resolveOcrEngine } from "../../src/metrics/ocr-choice.ts";
import { shoppingPage, solidPng } from "../support/evaluator-images.ts";

const MODEL = "Org/Test-Model";
const MODEL_DIR = "org__test-model";
let root: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-rescore-"));
});
afterAll(async () => {
  await shutdownVisualScorers();
  fs.rmSync(root, { recursive: true, force: true });
});

const replaySettings = { assertionJudgeKind: "model", assertionJudgeModel: "gpt-4o", groundingKind: "model", groundingModel: "gpt-4o" };

function settingsFor(overrides: Partial<EvalSettings> = {}): EvalSettings {
  return {
    ...replaySettings,
    ocrEngine: "tesseract.js",
    ocrEngineVersion: "7.0.0",
    ocrEngineDetail: "eng",
    visualMetric: "ssim-gray-256",
    dinoStatus: "unavailable: no model",
    mllmJudgeKind: "offline-proxy",
    mllmJudgeModel: "offline-proxy",
    pairingMode: "official",
    protocol: "corrected",
    promptHashes: {},
    source: "iwr",
    ...overrides,
  };
}

function recordFor(taskId: number, lists: EvalRecord["lists"], successStep: number, totalSteps: number, settings: EvalSettings): EvalRecord {
  const steps = lists.ocr.map((ocr, position) => ({
    position,
    actionIndex: position === 0 ? null : position - 1,
    evalpoint: position,
    evalpointPath: `e/${position}.png`,
    checkpointPath: `c/step_${position}.png`,
    ocr,
    dino: lists.dino[position] ?? 0,
    mllm: lists.mllm[position] ?? 0,
    checkpointText: "",
    screenshotText: "",
    judgeReply: "",
    judgeParsed: true,
  }));
  const { pairingMode, source: _source, ...rest } = settings;
  return buildEvalRecord({
    taskId,
    model: MODEL,
    totalSteps,
    executedSteps: successStep,
    successStep,
    assertions: [],
    steps,
    pairing: { mode: pairingMode, truncated: [] },
    settings: rest,
  });
}

describe("scoring a task end to end (real OCR, fallback visual metric, offline proxy judge)", () => {
  it("pairs, scores, builds and writes eval.json atomically, refusing to overwrite it", async () => {
    const taskDir = path.join(root, "1", MODEL_DIR);
    const files = {
      cp0: path.join(root, "step_0.png"),
      cp1: path.join(root, "step_1.png"),
      ep0: path.join(taskDir, "evalpoints", "0.png"),
      ep1: path.join(taskDir, "evalpoints", "1.png"),
    };
    fs.mkdirSync(path.dirname(files.ep0), { recursive: true });
    const page = await shoppingPage();
    fs.writeFileSync(files.cp0, page);
    fs.writeFileSync(files.cp1, await shoppingPage("Shopping List", "Buy milk and bread tomorrow"));
    fs.writeFileSync(files.ep0, page);
    fs.writeFileSync(files.ep1, await solidPng(1280, 720, [255, 255, 255]));

    // One flagged action, executed, no "No": aligned pairs ep0→step_0, ep1→step_1.
    const pairing = pairEvalpoints({
      flags: [true],
      successStep: 1,
      evalpointPaths: [files.ep0, files.ep1],
      checkpointPaths: [files.cp0, files.cp1],
      mode: "aligned",
    });
    const scorers = await createVisualScorers({ dinoLocation: { found: false, reason: "test runs without the model" } });
    const steps = await scoreVisualPairs(pairing.pairs, scorers);
    expect(steps.map((step) => step.ocr)).toEqual([1, 0]);
    expect(steps[0]?.dino).toBeCloseTo(1, 9);
    expect(steps[0]?.mllm).toBe(100);
    expect(steps[1]?.screenshotText).toBe("");

    const record = buildEvalRecord({
      taskId: 1,
      model: MODEL,
      totalSteps: 1,
      executedSteps: 1,
      successStep: 1,
      assertions: [{ actionIndex: 0, assertion: "the list shows milk", result: "Yes", think: "it does" }],
      steps,
      pairing,
      settings: { ...replaySettings, ...visualSettings(scorers), protocol: "corrected" },
    });
    expect(record.settings).toMatchObject({
      ocrEngine: resolveOcrEngine().name,
      visualMetric: "ssim-gray-256",
      mllmJudgeKind: "offline-proxy",
      pairingMode: "aligned",
    });
    expect(record.settings.dinoStatus).toBe("unavailable: test runs without the model");
    expect(record.scores.ifs).toBe(1);
    // Final = 0.7 + 0.3 · VFS, VFS from the recorded lists.
    const lfs = (0.5 + (1 + (steps[1]?.dino ?? 0)) / 2) / 2;
    const hfs = (100 + (steps[1]?.mllm ?? 0)) / 200;
    expect(record.scores.final).toBeCloseTo(0.7 + 0.3 * (0.5 * lfs + 0.5 * hfs), 12);

    const file = path.join(taskDir, "eval.json");
    writeEvalRecord(file, record);
    expect(readEvalRecord(file)).toEqual(record);
    expect(fs.readdirSync(taskDir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(() => writeEvalRecord(file, record)).toThrow(/already exists/);
  });
});

describe("metrics report", () => {
  it("prints one row per task and an avg row, percentages with two decimals", () => {
    const a = recordFor(3, { ocr: [1, 0.5, 0.8], dino: [0.9, 0.6, 0.3], mllm: [80, 40, 60] }, 2, 4, settingsFor());
    const b = recordFor(1, { ocr: [0.4], dino: [0.5], mllm: [30] }, 0, 5, settingsFor());
    const markdown = renderMetricsMarkdown(MODEL, [
      { taskId: a.taskId, scores: a.scores, settings: a.settings },
      { taskId: b.taskId, scores: b.scores, settings: b.settings },
    ]);
    const lines = markdown.split("\n");
    expect(lines).toContain("| task | LFS | HFS | IFS | VFS | Final | OCR | DINO | Coverage |");
    // Task 1: LFS 45, HFS 30, IFS 0, VFS 37.5, Final 11.25; task 3: 68.33 60 50 64.17 54.25.
    expect(lines).toContain("| 1 | 45.00 | 30.00 | 0.00 | 37.50 | 11.25 | 40.00 | 50.00 | 100.00 |");
    expect(lines).toContain("| 3 | 68.33 | 60.00 | 50.00 | 64.17 | 54.25 | 76.67 | 60.00 | 100.00 |");
    expect(lines).toContain("| avg | 56.67 | 45.00 | 25.00 | 50.83 | 32.75 | 58.33 | 55.00 | 100.00 |");
    expect(lines.indexOf("| 1 | 45.00 | 30.00 | 0.00 | 37.50 | 11.25 | 40.00 | 50.00 | 100.00 |")).toBeLessThan(
      lines.indexOf("| 3 | 68.33 | 60.00 | 50.00 | 64.17 | 54.25 | 76.67 | 60.00 | 100.00 |"),
    );
    expect(markdown).toContain("- pairingMode: official");
    expect(markdown).toContain("- protocol: corrected");
  });

  it("refuses to average results made under different judge settings, naming the keys", () => {
    const a = recordFor(1, { ocr: [1], dino: [1], mllm: [100] }, 1, 1, settingsFor());
    const b = recordFor(
      2,
      { ocr: [1], dino: [1], mllm: [100] },
      1,
      1,
      settingsFor({ pairingMode: "aligned", mllmJudgeKind: "model", mllmJudgeModel: "gpt-4o" }),
    );
    const render = () =>
      renderMetricsMarkdown(MODEL, [
        { taskId: 1, scores: a.scores, settings: a.settings },
        { taskId: 2, scores: b.scores, settings: b.settings },
      ]);
    expect(render).toThrow(/different judge settings/);
    expect(render).toThrow(/pairingMode: 'official' \(tasks 1\) vs 'aligned' \(tasks 2\)/);
    expect(render).toThrow(/mllmJudgeModel/);
    // A different reason for DINO's absence is not a different metric.
    const c = recordFor(3, { ocr: [1], dino: [1], mllm: [100] }, 1, 1, settingsFor({ dinoStatus: "unavailable: another machine" }));
    expect(() =>
      renderMetricsMarkdown(MODEL, [
        { taskId: 1, scores: a.scores, settings: a.settings },
        { taskId: 3, scores: c.scores, settings: c.settings },
      ]),
    ).not.toThrow();
  });
});

describe("rescore", () => {
  it("reads the harness's eval.json keys, its MLLM scale 0–1 and its untruncated lists", () => {
    const file = path.join(import.meta.dirname, "fixtures", "harness-eval.json");
    const input = readHarnessEval(JSON.parse(fs.readFileSync(file, "utf8")), file);
    expect(input.successStep).toBe(1);
    expect(input.totalSteps).toBe(4);
    expect(input.ocr).toEqual([1, 0.5, 0]);
    expect(input.dino).toEqual([0.9, 0.7, 0.2]);
    expect(input.mllm.map((score) => Math.round(score * 1e9) / 1e9)).toEqual([70, 50, 90]);
    const complete = { total_step: 2, success_step: 1, all_ocr_scores: [1], all_dino_scores: [1], all_mllm_scores: [0.5] };
    const { all_mllm_scores: _dropped, ...withoutMllm } = complete;
    expect(() => readHarnessEval(withoutMllm, "x.json")).toThrow(/x\.json: all_mllm_scores: .*needs total_step, success_step/);
    expect(() => readHarnessEval({ ...complete, success_step: "1" }, "x.json")).toThrow(/x\.json: success_step/);
    // MLLM on the harness's 0–1 scale: 70 (our 0–100 scale) is refused, not silently divided.
    expect(() => readHarnessEval({ ...complete, all_mllm_scores: [70] }, "x.json")).toThrow(/x\.json: all_mllm_scores\.0/);
    expect(() => readHarnessEval({ ...complete, success_step: 3 }, "x.json")).toThrow(/success_step 3 exceeds total_step 2/);
    // The keys our old reader guessed at are not the harness's.
    expect(() => readHarnessEval({ success_step: 1, total_steps: 2, ocr_scores: [1], dino_scores: [1], mllm_scores: [50] }, "x.json")).toThrow(/total_step/);
  });

  it("recomputes a harness results folder by hand-checked numbers and writes the harness's report, listing tasks without eval.json", () => {
    const results = fs.mkdtempSync(path.join(root, "harness-"));
    const fixture = fs.readFileSync(path.join(import.meta.dirname, "fixtures", "harness-eval.json"));
    fs.mkdirSync(path.join(results, "7", "gpt-4o"), { recursive: true });
    fs.writeFileSync(path.join(results, "7", "gpt-4o", "eval.json"), fixture);
    fs.mkdirSync(path.join(results, "9", "gpt-4o"), { recursive: true });
    const before = fs.readFileSync(path.join(results, "7", "gpt-4o", "eval.json"));

    const result = rescore(results, "GPT-4o");
    // success_step 1 of 4 → keep 2 entries: OCR (1 + .5)/2 = .75, DINO (.9 + .7)/2 = .8, MLLM (.7 + .5)/2 = .6.
    // IFS 1/4 = .25; LFS (.75 + .8)/2 = .775; HFS .6; VFS .5·.775 + .5·.6 = .6875; Final .7·.25 + .3·.6875 = .38125
    expect(result.rows).toHaveLength(1);
    const scores = result.rows[0]!.scores;
    expect(scores.ifs).toBeCloseTo(0.25, 12);
    expect(scores.ocrMean).toBeCloseTo(0.75, 12);
    expect(scores.dinoMean).toBeCloseTo(0.8, 12);
    expect(scores.lfs).toBeCloseTo(0.775, 12);
    expect(scores.hfs).toBeCloseTo(0.6, 12);
    expect(scores.vfs).toBeCloseTo(0.6875, 12);
    expect(scores.final).toBeCloseTo(0.38125, 12);
    expect(result.rows[0]?.settings).toMatchObject({ source: "iwr-bench-harness", protocol: "official" });
    expect(result.missing).toEqual([9]);
    // The harness's file name keeps the model name's case.
    expect(result.reportPath).toBe(path.join(results, "reports", "GPT-4o_metrics.md"));
    const report = fs.readFileSync(result.reportPath, "utf8").split("\n");
    expect(report[0]).toBe("# model: GPT-4o result");
    expect(report).toContain("| task | IFS(%) | OCR(%) | DINO(%) | LFS(%) | HFS(%) | VFS(%) | Final(%) | Coverage(%) |");
    expect(report).toContain("| 7 | 25.00 | 75.00 | 80.00 | 77.50 | 60.00 | 68.75 | 38.13 | 100.00 |");
    expect(report).toContain("Left out (no eval.json): tasks 9.");
    expect(fs.readFileSync(path.join(results, "7", "gpt-4o", "eval.json"))).toEqual(before);
  });

  it("official: the mean is over tasks with an index.html, in task-file order; corrected counts a missing page as 0", () => {
    const official = settingsFor({ protocol: "official" });
    const present = recordFor(5, { ocr: [1, 1], dino: [1, 1], mllm: [100, 100] }, 1, 1, official);
    const absent = recordFor(2, { ocr: [], dino: [], mllm: [] }, 0, 3, official);
    const rows = [
      { taskId: 2, scores: absent.scores, settings: absent.settings, hasPage: false },
      { taskId: 5, scores: present.scores, settings: present.settings },
    ];
    const lines = renderMetricsMarkdown(MODEL, rows, { taskOrder: [5, 2] }).split("\n");
    expect(lines[0]).toBe("# model: Org__Test-Model result");
    expect(lines.indexOf("| 5 | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 |")).toBeLessThan(
      lines.indexOf("| 2 | — | — | — | — | — | — | — | 0.00 |"),
    );
    expect(lines).toContain("| avg | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 | 50.00 |");

    const corrected = rows.map((row) => ({ ...row, settings: { ...row.settings, protocol: "corrected" as const } }));
    const ours = renderMetricsMarkdown(MODEL, corrected).split("\n");
    expect(ours).toContain("| 2 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 |");
    expect(ours).toContain("| avg | 50.00 | 50.00 | 50.00 | 50.00 | 50.00 | 50.00 | 50.00 | 50.00 |");
    // And the two profiles never share a table.
    expect(() => renderMetricsMarkdown(MODEL, [rows[1]!, corrected[0]!])).toThrow(/protocol: 'official' \(tasks 5\) vs 'corrected' \(tasks 2\)/);
  });

  it("recomputes our own eval.json files and refuses a mix of ours and the harness's", () => {
    const results = fs.mkdtempSync(path.join(root, "ours-"));
    writeEvalRecord(
      path.join(results, "1", MODEL_DIR, "eval.json"),
      recordFor(1, { ocr: [1, 0.5, 0.8], dino: [0.9, 0.6, 0.3], mllm: [80, 40, 60] }, 2, 4, settingsFor()),
    );
    expect(rescore(results, MODEL).rows[0]?.scores.final).toBeCloseTo(0.5425, 12);
    fs.mkdirSync(path.join(results, "2", MODEL_DIR), { recursive: true });
    fs.copyFileSync(path.join(import.meta.dirname, "fixtures", "harness-eval.json"), path.join(results, "2", MODEL_DIR, "eval.json"));
    expect(() => rescore(results, MODEL)).toThrow(/source: 'iwr' \(tasks 1\) vs 'iwr-bench-harness' \(tasks 2\)/);
  });

  it("says where it looked when there is nothing to rescore", () => {
    const empty = fs.mkdtempSync(path.join(root, "empty-"));
    expect(() => rescore(empty, MODEL)).toThrow(/no eval\.json for model 'Org\/Test-Model'/);
  });
});
