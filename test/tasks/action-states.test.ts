/**
 * The reference states around every action (`states/action_<i>.png`, ours): the loader
 * exposes them as `truth.actionStatePaths` (index i → after action i, index 0 the initial
 * checkpoint) when a task has them, leaves the field out when it does not (the
 * benchmark's own tasks, older recordings), never hands them to readers of the inputs,
 * and reports an incomplete, undecodable or escaping folder as a problem.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionStateFileName, TASK_FILES } from "../../src/tasks/layout.ts";
import { loadTaskSet } from "../../src/tasks/loader.ts";
import { defaultActions, makeTestPng, type TaskSetFixture, writeValidTaskSet } from "../support/tasks-fixtures.ts";

let root: string;
let counter = 0;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "iwr-action-states-"));
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const ACTIONS = defaultActions().length;

/** A valid one-task set, with a complete states/ folder unless `states` is false. */
async function taskSet(states = true): Promise<TaskSetFixture> {
  counter += 1;
  const set = await writeValidTaskSet(path.join(root, `set-${counter}`));
  if (states) {
    for (let action = 1; action <= ACTIONS; action++) {
      await makeTestPng(path.join(set.taskDir(1), TASK_FILES.statesDir, actionStateFileName(action)), { shade: 10 * action });
    }
  }
  return set;
}

const statesDir = (set: TaskSetFixture) => path.join(set.taskDir(1), TASK_FILES.statesDir);

describe("reference states around every action", () => {
  it("are the truth's actionStatePaths: index 0 the initial checkpoint, index i the state after action i", async () => {
    const set = await taskSet();
    const { tasks, problems } = await loadTaskSet(set.jsonlPath, { checkMedia: true });
    expect(problems).toEqual([]);
    const [task] = tasks;
    expect(task!.truth.actionStatePaths).toEqual([
      task!.truth.checkpointPaths[0],
      ...Array.from({ length: ACTIONS }, (_, index) => path.resolve(statesDir(set), actionStateFileName(index + 1))),
    ]);
    // Never an input.
    expect(JSON.stringify(task!.inputs)).not.toContain(path.resolve(statesDir(set)));
  });

  it("are absent, not empty, for a task without them, and for readers of the inputs alone", async () => {
    const without = await taskSet(false);
    const [task] = (await loadTaskSet(without.jsonlPath)).tasks;
    expect(task).toBeDefined();
    expect("actionStatePaths" in task!.truth).toBe(false);

    const withStates = await taskSet();
    const inputsOnly = await loadTaskSet(withStates.jsonlPath, { needsCheckpoints: false });
    expect(inputsOnly.problems).toEqual([]);
    expect("actionStatePaths" in inputsOnly.tasks[0]!.truth).toBe(false);
  });

  it("must be complete: a missing state is a problem naming the folder, what was expected and what was found", async () => {
    const set = await taskSet();
    await fs.rm(path.join(statesDir(set), actionStateFileName(3)));
    const { tasks, problems } = await loadTaskSet(set.jsonlPath);
    expect(tasks).toEqual([]);
    expect(problems.map((problem) => problem.message)).toEqual([
      `${statesDir(set)}: expected the state after each of the ${ACTIONS} actions (action_1.png..action_${ACTIONS}.png), ` +
        "found 3 (action_1.png, action_2.png, action_4.png)",
    ]);
  });

  it("must decode whole (checked with the media) and must not be empty", async () => {
    const set = await taskSet();
    const broken = path.join(statesDir(set), actionStateFileName(2));
    const png = await fs.readFile(broken);
    await fs.writeFile(broken, png.subarray(0, Math.floor(png.length / 2)));
    await fs.writeFile(path.join(statesDir(set), actionStateFileName(4)), "");
    const { problems } = await loadTaskSet(set.jsonlPath, { checkMedia: true });
    const messages = problems.map((problem) => problem.message);
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`${actionStateFileName(4)}: the reference state is empty`)));
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`${actionStateFileName(2)}: not a readable image`)));
  });

  it("must stay inside the task set: a state linked to a file outside is refused", async () => {
    const set = await taskSet();
    const outside = path.join(root, `outside-${counter}.png`);
    await makeTestPng(outside);
    const linked = path.join(statesDir(set), actionStateFileName(1));
    await fs.rm(linked);
    await fs.symlink(outside, linked);
    const { problems } = await loadTaskSet(set.jsonlPath);
    expect(problems.map((problem) => problem.message)).toContainEqual(expect.stringMatching(/action_1\.png: resolves to .*outside the task set/));
  });

  it("a stray file in the folder is a warning, not a problem", async () => {
    const set = await taskSet();
    await fs.writeFile(path.join(statesDir(set), "notes.txt"), "hand-written");
    const { tasks, problems, warnings } = await loadTaskSet(set.jsonlPath);
    expect(problems).toEqual([]);
    expect(tasks).toHaveLength(1);
    expect(warnings.map((warning) => warning.message)).toContainEqual(expect.stringMatching(/notes\.txt: not a reference state/));
  });
});
