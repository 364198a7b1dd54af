/**
 * A task folder, or anything in it, that resolves outside the task set (a symbolic link
 * to /etc, say) is refused by the validator and never served to a candidate page, even
 * when the link appears after the task was loaded.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { closeEvaluator, createEvaluator } from "../../src/evaluator/create-evaluator.ts";
import { evaluateOneTask } from "../../src/evaluator/evaluate-candidate.ts";
import { loadTaskSet, loadTasks } from "../../src/tasks/loader.ts";
import { formatProblem } from "../../src/tasks/problems.ts";
import { writeCandidate } from "../support/evaluator-replay-fixtures.ts";
import { writeValidTaskSet } from "../support/tasks-fixtures.ts";

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-confine-"));
});
afterAll(async () => {
  await closeSharedBrowser();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function messagesFor(name: string, breakIt: (taskDir: string) => void): Promise<string[]> {
  const set = await writeValidTaskSet(path.join(dir, name), { count: 2 });
  breakIt(set.taskDir(1));
  const loaded = await loadTaskSet(set.jsonlPath, { checkMedia: true });
  expect(loaded.tasks.map((task) => task.id)).toEqual([2]);
  return loaded.problems.map(formatProblem);
}

describe("the validator keeps every task file inside its task set", () => {
  it("refuses an assets folder that is a link to /etc", async () => {
    const messages = await messagesFor("assets-link", (taskDir) => {
      fs.rmSync(path.join(taskDir, "assets"), { recursive: true });
      fs.symlinkSync("/etc", path.join(taskDir, "assets"));
    });
    expect(messages.some((message) => /assets: resolves to \/etc, outside the task set .*; files outside the dataset are never served$/.test(message))).toBe(
      true,
    );
  });

  it("refuses an asset file that links outside, and a dangling link", async () => {
    const messages = await messagesFor("file-link", (taskDir) => {
      fs.symlinkSync("/etc/hostname", path.join(taskDir, "assets", "003.png"));
      fs.symlinkSync(path.join(taskDir, "nowhere.png"), path.join(taskDir, "assets", "004.png"));
    });
    expect(messages.join("\n")).toMatch(/assets\/003\.png: resolves to \/etc\/hostname, outside the task set/);
    expect(messages.join("\n")).toMatch(/assets\/004\.png: a symbolic link to nothing/);
  });

  it("refuses a task folder that is a link to another place", async () => {
    const elsewhere = await writeValidTaskSet(path.join(dir, "elsewhere"), { count: 1 });
    const messages = await messagesFor("folder-link", (taskDir) => {
      fs.rmSync(taskDir, { recursive: true });
      fs.symlinkSync(elsewhere.taskDir(1), taskDir);
    });
    expect(messages.join("\n")).toMatch(/\/1: resolves to .*elsewhere\/fixture\/1, outside the task set/);
  });

  it("accepts links that stay inside the set, and a whole set folder that is itself a link", async () => {
    const set = await writeValidTaskSet(path.join(dir, "inside"), { count: 2 });
    fs.rmSync(path.join(set.taskDir(2), "assets"), { recursive: true });
    fs.symlinkSync(path.join(set.taskDir(1), "assets"), path.join(set.taskDir(2), "assets"));
    const moved = path.join(dir, "inside-data");
    fs.renameSync(set.setDir, moved);
    fs.symlinkSync(moved, set.setDir);
    const loaded = await loadTaskSet(set.jsonlPath, { checkMedia: true });
    expect(loaded.problems.map(formatProblem)).toEqual([]);
    expect(loaded.tasks.map((task) => task.id)).toEqual([1, 2]);
  });
});

describe("the evaluator never serves what lies outside the set", () => {
  it("fails the task with TASK_INVALID when its assets became a link to /etc after loading, before any page opens", async () => {
    const set = await writeValidTaskSet(path.join(dir, "late-link"), { count: 1, width: 320, height: 180 });
    const resultDir = path.join(dir, "late-link", "results");
    const candidateDir = writeCandidate(path.join(resultDir, "1", "m"), "<!doctype html><body><p>page</p></body>");
    const [task] = await loadTasks(set.jsonlPath);
    fs.rmSync(path.join(set.taskDir(1), "assets"), { recursive: true });
    fs.symlinkSync("/etc", path.join(set.taskDir(1), "assets"));
    const evaluator = await createEvaluator({ judge: "heuristic", grounding: "heuristic" });
    try {
      const { outcome } = await evaluateOneTask(task!, { resultDir, model: "m", pairing: "aligned" }, evaluator);
      expect(outcome.status).toBe("failed");
      expect(outcome.error).toMatchObject({ code: "TASK_INVALID" });
      expect(outcome.error?.message).toMatch(/assets resolves to \/etc, outside the task set .*: it is not served/);
    } finally {
      await closeEvaluator();
    }
    // The error is recorded; no page was opened (no evalpoints, no trace, nothing staged).
    expect(fs.readdirSync(candidateDir).sort()).toEqual(["eval-error.json", "index.html"]);
  });
});
