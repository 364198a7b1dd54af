/**
 * One task's hostile page never fails another's: with --workers 2, three hostile pages
 * (a request flood, a typed-array bomb, a canvas bomb) among nine true ones, the nine
 * get exactly the scores they get when evaluated without them, the three fail with their
 * own reasons, and the report covers all twelve tasks.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvalRecord, readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { runEvaluation } from "../../src/run/evaluate.ts";
import { HOSTILE_PAGES_DIR } from "../support/browser-fixtures.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";
import { type TaskSetFixture, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const HOSTILE: Record<number, string> = { 3: "request-flood.html", 5: "arraybuffer-bomb.html", 9: "canvas-bomb.html" };
const TRUE_IDS = [1, 2, 4, 6, 7, 8, 10, 11, 12];
let dir: string;
let set: TaskSetFixture;

beforeAll(async () => {
  dir = tempDir("isolation");
  set = await writeValidTaskSet(dir, { count: 12, ...SHOPPING_LIST_TASK_OPTIONS });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function evaluateFolder(name: string, candidates: Record<number, string>): Promise<Map<number, EvalRecord>> {
  const resultDir = path.join(dir, name);
  for (const [id, html] of Object.entries(candidates)) writeCandidate(path.join(resultDir, id, "m"), html);
  const summary = await runEvaluation({
    dataPath: set.jsonlPath,
    resultDir,
    model: "m",
    judge: "heuristic",
    grounding: "heuristic",
    pairing: "aligned",
    workers: 2,
    pageMemoryMiB: 1000,
    ids: Object.keys(candidates).map(Number),
  });
  expect(summary.tasks.filter((task) => task.status === "failed")).toEqual([]);
  return new Map(Object.keys(candidates).map((id) => [Number(id), readEvalRecord(path.join(resultDir, id, "m", "eval.json"))]));
}

describe("isolation between tasks", () => {
  it("three hostile pages among nine true ones change none of the nine's scores", async () => {
    const page = shoppingListPage();
    const alone = await evaluateFolder("alone", Object.fromEntries(TRUE_IDS.map((id) => [id, page])));
    const mixed = await evaluateFolder("mixed", {
      ...Object.fromEntries(TRUE_IDS.map((id) => [id, page])),
      ...Object.fromEntries(Object.entries(HOSTILE).map(([id, file]) => [id, fs.readFileSync(path.join(HOSTILE_PAGES_DIR, file), "utf8")])),
    });
    for (const id of TRUE_IDS) {
      expect(mixed.get(id)?.scores, `task ${id}`).toEqual(alone.get(id)?.scores);
      expect(mixed.get(id)?.stopReason, `task ${id}`).toBeUndefined();
    }
    expect(alone.get(1)?.scores.ifs).toBe(1);
    // Each hostile page failed for its own reason, recorded in its own result.
    expect(mixed.get(3)?.stopReason?.message).toMatch(/made more than 2000 requests/);
    // Both memory pages take their memory in steps (buffers, canvases): on a busy machine the replay may reach
    // the first action (on a page with nothing to act on) before the page is over its limit. Either way the
    // failure is the page's own; the limit itself is tested on its own in test/browser/page-limits.long.test.ts.
    expect(mixed.get(5)?.stopReason?.message).toMatch(/grew past its memory limit of 1000 MiB|the page has no interactive elements/);
    expect(mixed.get(9)?.stopReason?.message).toMatch(/grew past its memory limit of 1000 MiB|the page has no interactive elements/);
    const report = fs.readFileSync(path.join(dir, "mixed", "reports", "m_metrics.md"), "utf8");
    expect(report.split("\n").filter((line) => /^\| \d+ \|/.test(line))).toHaveLength(12);
  }, 300_000);
});
