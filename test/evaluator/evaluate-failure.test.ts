/**
 * A task whose evaluation cannot finish (here: a corrupt reference checkpoint) is
 * recorded in that task's folder as eval-error.json, gets no eval.json (so a rerun
 * tries it again), and the run goes on to the next task.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { main } from "../../src/cli/main.ts";
import { RESULT_FILES } from "../../src/results/layout.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";
import { type TaskSetFixture, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const MODEL_DIR = "some-model";
let dir: string;
let set: TaskSetFixture;
let resultDir: string;

beforeAll(async () => {
  dir = tempDir("evaluate-failure");
  set = await writeValidTaskSet(dir, { count: 2, ...SHOPPING_LIST_TASK_OPTIONS });
  resultDir = path.join(dir, "results");
  for (const id of set.ids) writeCandidate(path.join(resultDir, String(id), MODEL_DIR), shoppingListPage());
  // Task 1's reference checkpoint is not an image any more (the run's quick check reads no PNG).
  fs.writeFileSync(path.join(set.taskDir(1), "checkpoints", "step_1.png"), "not a png");
});

afterAll(async () => {
  await closeSharedBrowser();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a task whose evaluation fails", () => {
  it("is recorded as eval-error.json beside its candidate, named in the summary, and the next task is still evaluated", async () => {
    const lines: string[] = [];
    const original = console.log;
    console.log = (...parts: unknown[]) => void lines.push(parts.map(String).join(" "));
    let code: number;
    try {
      code = await main([
        "node",
        "iwr",
        "--quiet",
        "evaluate",
        "--data",
        set.jsonlPath,
        "--result",
        resultDir,
        "--model",
        "Some-Model",
        "--judge",
        "heuristic",
        "--grounding",
        "heuristic",
      ]);
    } finally {
      console.log = original;
      process.exitCode = undefined;
    }
    // The run finishes every task, and its exit code says that one failed.
    expect(code).toBe(1);
    expect(lines.join("\n")).toMatch(/evaluated 1, skipped 0 .* failed 1/);
    expect(lines.join("\n")).toContain(
      `1 of 2 task(s) failed; their errors are in eval-error.json beside each:\n  task 1: ${path.join(resultDir, "1", MODEL_DIR)}/eval-error.json`,
    );

    const failedDir = path.join(resultDir, "1", MODEL_DIR);
    expect(fs.existsSync(path.join(failedDir, "eval.json"))).toBe(false);
    const failure = JSON.parse(fs.readFileSync(path.join(failedDir, RESULT_FILES.evalError), "utf8"));
    expect(failure).toMatchObject({ taskId: 1, model: "Some-Model" });
    // The message names the broken file, not only the image library's complaint.
    expect(failure.error.message).toContain(`checkpoint ${path.join(set.taskDir(1), "checkpoints", "step_1.png")} is not a readable image`);

    expect(fs.existsSync(path.join(resultDir, "2", MODEL_DIR, "eval.json"))).toBe(true);
  });
});
