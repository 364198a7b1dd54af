/**
 * A task's page slot covers opening and replaying its page, not judging or scoring:
 * a verdict that only comes once the slot is free must not stall the evaluation (it
 * would if the slot waited for the judge), and the run's result is still complete.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeEvaluator, createEvaluator } from "../../src/evaluator/create-evaluator.ts";
import { evaluateTask, type PageSlots } from "../../src/evaluator/evaluate-task.ts";
import type { AssertionJudge } from "../../src/evaluator/judge/types.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";
import { writeValidTaskSet } from "../support/tasks-fixtures.ts";

let dir: string;
let task: Task;

beforeAll(async () => {
  dir = tempDir("page-slots");
  const set = await writeValidTaskSet(dir, { count: 1, ...SHOPPING_LIST_TASK_OPTIONS });
  task = (await loadTasks(set.jsonlPath))[0]!;
});

afterAll(async () => {
  await closeEvaluator();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("evaluateTask with page slots", () => {
  it("frees the page slot when the replay ends; judging and scoring finish outside it", async () => {
    const base = await createEvaluator({ judge: "heuristic", grounding: "heuristic", workers: 1, trace: false });
    const events: string[] = [];
    let freeSlot!: () => void;
    const slotFreed = new Promise<void>((resolve) => (freeSlot = resolve));
    const pageSlots: PageSlots = async (open) => {
      events.push("slot taken");
      try {
        return await open();
      } finally {
        events.push("slot freed");
        freeSlot();
      }
    };
    const judge: AssertionJudge = {
      kind: base.judge.kind,
      promptHashes: base.judge.promptHashes,
      async judge(input) {
        events.push("judge asked");
        await slotFreed;
        events.push("verdict");
        return base.judge.judge(input);
      },
    };
    const candidateDir = writeCandidate(path.join(dir, "results", String(task.id), "model"), shoppingListPage());
    const stalled = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("the evaluation waited for the judge inside its page slot")), 60_000).unref(),
    );
    const evaluation = await Promise.race([
      evaluateTask({ task, candidateDir, model: "model", pairingModes: ["aligned"], evaluator: { ...base, judge, pageSlots }, replace: true }),
      stalled,
    ]);

    expect(events).toEqual(["slot taken", "judge asked", "slot freed", "verdict"]);
    const record = evaluation.records[0]!.record;
    expect(record.scores.ifs).toBe(1);
    expect(record.assertions.map((entry) => entry.result)).toEqual(["Yes"]);
    expect(fs.existsSync(path.join(candidateDir, "eval.json"))).toBe(true);
  });
});
