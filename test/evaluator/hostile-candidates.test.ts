/**
 * The hostile-page corpus evaluated as candidates in one run (two workers, one
 * process, real Chromium): a page that cannot be replayed scores 0 with its reason
 * recorded, the run never stops, and a normal candidate evaluated after them scores.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvalRecord, readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { modelDirName } from "../../src/models/index.ts";
import { type EvaluateRunSummary, runEvaluation } from "../../src/run/evaluate.ts";
import { HOSTILE_PAGES_DIR } from "../support/browser-fixtures.ts";
import { shoppingListPage, tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";
import { writeValidTaskSet } from "../support/tasks-fixtures.ts";

const MODEL = "Hostile/Model-1";
/** Task id → candidate page; the normal page goes last so it runs after every hostile one. */
const CANDIDATES: Array<{ id: number; name: string; html: () => string }> = [
  ...["infinite-loop", "alert-loop", "popup-flood", "external-location", "internet-requests", "throw-at-load"].map((name, index) => ({
    id: index + 1,
    name,
    html: () => fs.readFileSync(path.join(HOSTILE_PAGES_DIR, `${name}.html`), "utf8"),
  })),
  { id: 7, name: "normal", html: () => shoppingListPage() },
];

let dir: string;
let resultDir: string;
let summary: EvaluateRunSummary;
const records = new Map<string, EvalRecord>();

beforeAll(async () => {
  dir = tempDir("hostile-eval");
  const set = await writeValidTaskSet(dir, {
    count: CANDIDATES.length,
    width: 640,
    height: 360,
    videoSeconds: 1,
    actions: [
      {
        type: "Click",
        parameters: { description: "the blue 'Add' button" },
        logical_assertion: "A new item 'Untitled' appears in the list",
        visual_evaluation_flag: true,
      },
      { type: "Scroll", parameters: { description: "scroll down the page" }, logical_assertion: "", visual_evaluation_flag: false },
    ],
  });
  resultDir = path.join(dir, "results");
  for (const candidate of CANDIDATES) writeCandidate(path.join(resultDir, String(candidate.id), modelDirName(MODEL)), candidate.html());
  summary = await runEvaluation({
    dataPath: set.jsonlPath,
    resultDir,
    model: MODEL,
    judge: "heuristic",
    grounding: "heuristic",
    pairing: "aligned",
    workers: 2,
    hostTimeouts: { navigationMs: 3_000, actionMs: 3_000, screenshotMs: 3_000 },
  });
  for (const candidate of CANDIDATES) {
    records.set(candidate.name, readEvalRecord(path.join(resultDir, String(candidate.id), modelDirName(MODEL), "eval.json")));
  }
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("hostile candidates", () => {
  it("evaluates every task without stopping the run", () => {
    expect(summary.tasks.map((task) => [task.taskId, task.status])).toEqual(CANDIDATES.map((candidate) => [candidate.id, "evaluated"]));
    expect(summary.reportPath && fs.existsSync(summary.reportPath)).toBe(true);
  });

  it.each(["infinite-loop", "alert-loop", "popup-flood", "external-location"])("%s cannot be replayed: final 0 with the reason", (name) => {
    const record = records.get(name)!;
    expect(record.scores.final).toBe(0);
    expect(record.executedSteps).toBe(0);
    expect(record.steps).toEqual([]);
    expect(record.stopReason?.code).toMatch(/^PAGE_(TIMEOUT|HOSTILE)$/);
  });

  it.each(["internet-requests", "throw-at-load"])("%s loads but has nothing to click: IFS 0, the failed action recorded", (name) => {
    const record = records.get(name)!;
    expect(record.scores.ifs).toBe(0);
    expect(record.executedSteps).toBe(0);
    expect(record.stopReason).toMatchObject({ code: "ACTION_FAILED" });
    expect(record.stopReason?.message).toMatch(/grounding found no element/);
  });

  it("the normal candidate after them still scores", () => {
    const record = records.get("normal")!;
    expect(record.stopReason).toBeUndefined();
    expect(record.executedSteps).toBe(2);
    expect(record.successStep).toBe(2);
    expect(record.scores.ifs).toBe(1);
    expect(record.assertions).toEqual([expect.objectContaining({ actionIndex: 0, result: "Yes" })]);
    expect(record.scores.final).toBeGreaterThan(0.7);
  });
});
