/**
 * The malformed-task corpus: a valid two-task set, copied and broken in exactly one
 * way per case; each case must yield exactly the one precise message expected.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTaskSet } from "../../src/tasks/loader.ts";
import { formatProblem } from "../../src/tasks/problems.ts";
import { type TaskLineInput, taskLine, writeJsonl, writeValidTaskSet } from "../support/tasks-fixtures.ts";

let root: string;
let baseDir: string;
let caseNumber = 0;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "iwr-tasks-malformed-"));
  baseDir = path.join(root, "base");
  await writeValidTaskSet(baseDir, { count: 2, name: "suite" });
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

interface Broken {
  jsonl: string;
  task: (id: number) => string;
}

/**
 * A fresh copy of the valid set, broken by `breakIt`; returns every formatted problem.
 * Media checks (ffprobe, PNG headers) only where the case is about media: they cost
 * a process start per video and say nothing about the other defects.
 */
async function problemsAfter(
  breakIt: (set: Broken) => Promise<void>,
  options: { checkMedia?: boolean } = {},
): Promise<{ messages: string[]; warnings: string[]; set: Broken }> {
  const dir = path.join(root, `case-${++caseNumber}`);
  await fs.cp(baseDir, dir, { recursive: true });
  const set: Broken = { jsonl: path.join(dir, "suite.jsonl"), task: (id) => path.join(dir, "suite", String(id)) };
  await breakIt(set);
  const result = await loadTaskSet(set.jsonl, { checkMedia: options.checkMedia ?? false });
  return { messages: result.problems.map(formatProblem), warnings: result.warnings.map(formatProblem), set };
}

/** Rewrites the .jsonl with task 1's line changed by `edit` (task 2 untouched). */
function editFirstLine(edit: (line: TaskLineInput) => unknown) {
  return async (set: Broken): Promise<void> => {
    const first = taskLine(1);
    await writeJsonl(set.jsonl, [edit(first) ?? first, taskLine(2)]);
  };
}

describe("malformed task corpus: one precise message per defect", () => {
  it("a valid set has no problems (the baseline every case starts from)", async () => {
    const { messages } = await problemsAfter(async () => {}, { checkMedia: true });
    expect(messages).toEqual([]);
  });

  it("malformed JSON: file:line and the parser's complaint with a column", async () => {
    const { messages, set } = await problemsAfter(async (s) => {
      await fs.writeFile(s.jsonl, `${JSON.stringify(taskLine(1))}\n{"id": 2 "classification": {}}\n`);
    });
    expect(messages).toEqual([`${set.jsonl}:2: not valid JSON: Expected ',' or '}' after property value at column 10`]);
  });

  it("unknown action type", async () => {
    const { messages, set } = await problemsAfter(
      editFirstLine((line) => {
        const action = line.action_sequence[2];
        if (action) action.type = "Tap" as "Click";
      }),
    );
    expect(messages).toEqual([`${set.jsonl}:1: action_sequence[2].type: expected one of Click|Type|Scroll|Press, got 'Tap'`]);
  });

  it("a missing required field", async () => {
    const { messages, set } = await problemsAfter(editFirstLine(({ action_sequence: _dropped, ...rest }) => rest));
    expect(messages).toEqual([`${set.jsonl}:1: action_sequence: expected a list, got nothing (the field is missing)`]);
  });

  it("a missing field the harness does without is a warning, not a problem", async () => {
    const { messages, warnings, set } = await problemsAfter(editFirstLine(({ source_website: _dropped, ...rest }) => rest));
    expect(messages).toEqual([]);
    expect(warnings).toEqual([`${set.jsonl}:1: source_website: missing ('unknown' in reports)`]);
  });

  it("an id of the wrong type", async () => {
    const { messages, set } = await problemsAfter(editFirstLine((line) => ({ ...line, id: "1" })));
    expect(messages).toEqual([`${set.jsonl}:1: id: expected number, got '1'`]);
  });

  it("a resolution that is not WIDTHxHEIGHT", async () => {
    const { messages, set } = await problemsAfter(
      editFirstLine((line) => {
        line.recording_details!.resolution = "320*180";
      }),
    );
    expect(messages).toEqual([`${set.jsonl}:1: recording_details.resolution: resolution must be 'WIDTHxHEIGHT', e.g. '1280x720', got '320*180'`]);
  });

  it("an unknown interaction class", async () => {
    const { messages, set } = await problemsAfter(
      editFirstLine((line) => {
        line.classification!.interaction_complexity = "L9" as "L1";
      }),
    );
    expect(messages).toEqual([`${set.jsonl}:1: classification.interaction_complexity: expected one of L1|L2|L3|L4, got 'L9'`]);
  });

  it("a Type action without text loads, with a warning (the real dataset's lines carry the text only in the description)", async () => {
    const { messages, warnings, set } = await problemsAfter(
      editFirstLine((line) => {
        const typing = line.action_sequence[1];
        if (typing) typing.parameters = { description: "type 'milk' into the search box at the top" };
      }),
    );
    expect(messages).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`${set.jsonl}:1: action_sequence[1].parameters.text: missing: the text to type is read from the description`);
  });

  it("an empty action sequence", async () => {
    const { messages, set } = await problemsAfter(
      editFirstLine((line) => {
        line.action_sequence = [];
      }),
    );
    expect(messages).toEqual([`${set.jsonl}:1: action_sequence: action_sequence must hold at least one action, got an empty list`]);
  });

  it("a line that is JSON but not an object", async () => {
    const { messages, set } = await problemsAfter(async (s) => {
      await fs.writeFile(s.jsonl, `[1, 2]\n${JSON.stringify(taskLine(2))}\n`);
    });
    expect(messages).toEqual([`${set.jsonl}:1: expected an object, got a list of 2 items`]);
  });

  it("a duplicate id", async () => {
    const { messages, set } = await problemsAfter(async (s) => writeJsonl(s.jsonl, [taskLine(1), taskLine(2), taskLine(1)]));
    expect(messages).toEqual([`${set.jsonl}:3: id: id 1 is used twice (first on line 1)`]);
  });

  it("a missing task folder", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.rm(s.task(2), { recursive: true }));
    expect(messages).toEqual([`${set.jsonl}:2: ${set.task(2)}: the task folder is missing`]);
  });

  it("a missing video", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.rm(path.join(s.task(1), "video.mp4")));
    expect(messages).toEqual([`${set.jsonl}:1: ${set.task(1)}/video.mp4: the video is missing`]);
  });

  it("a zero-length video", async () => {
    // With media checks on: an empty file must not also be reported as unreadable by ffprobe.
    const { messages, set } = await problemsAfter(async (s) => fs.writeFile(path.join(s.task(2), "video.mp4"), ""), { checkMedia: true });
    expect(messages).toEqual([`${set.jsonl}:2: ${set.task(2)}/video.mp4: the video is empty (0 bytes)`]);
  });

  it("a video ffprobe cannot read", async () => {
    const { messages, set } = await problemsAfter(
      async (s) => fs.writeFile(path.join(s.task(1), "video.mp4"), Buffer.from("this is not an mp4 file, only some text".repeat(20))),
      { checkMedia: true },
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(new RegExp(`^${escapeRegExp(set.jsonl)}:1: ${escapeRegExp(set.task(1))}/video.mp4: ffprobe could not read it: .*Invalid data`));
  });

  it("a checkpoint missing for a flagged action", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.rm(path.join(s.task(1), "checkpoints", "step_2.png")));
    expect(messages).toEqual([
      `${set.jsonl}:1: ${set.task(1)}/checkpoints: ` +
        "expected 3 checkpoints (step_0.png..step_2.png: the initial state + 2 actions with visual_evaluation_flag), found 2 (step_0.png, step_1.png)",
    ]);
  });

  it("one more flagged action than there are checkpoints", async () => {
    const { messages, set } = await problemsAfter(
      editFirstLine((line) => {
        const press = line.action_sequence[3];
        if (press) press.visual_evaluation_flag = true;
      }),
    );
    expect(messages).toEqual([
      `${set.jsonl}:1: ${set.task(1)}/checkpoints: ` +
        "expected 4 checkpoints (step_0.png..step_3.png: the initial state + 3 actions with visual_evaluation_flag), " +
        "found 3 (step_0.png, step_1.png, step_2.png)",
    ]);
  });

  it("a checkpoint that is not a readable PNG", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.writeFile(path.join(s.task(2), "checkpoints", "step_1.png"), "not a png"), {
      checkMedia: true,
    });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(new RegExp(`^${escapeRegExp(set.jsonl)}:2: ${escapeRegExp(set.task(2))}/checkpoints/step_1.png: not a readable image: `));
  });

  it("no asset sheet in stitched_assets", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.rm(path.join(s.task(1), "stitched_assets", "stitched_image_1.png")));
    expect(messages).toEqual([`${set.jsonl}:1: ${set.task(1)}/stitched_assets: no asset sheet (stitched_image*.png) in the folder`]);
  });

  it("a missing assets folder", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.rm(path.join(s.task(2), "assets"), { recursive: true }));
    expect(messages).toEqual([`${set.jsonl}:2: ${set.task(2)}/assets: the assets folder is missing`]);
  });

  it("an empty .jsonl file", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.writeFile(s.jsonl, "\n\n"));
    expect(messages).toEqual([`${set.jsonl}: the file holds no tasks (it is empty)`]);
  });

  it("a missing .jsonl file", async () => {
    const { messages, set } = await problemsAfter(async (s) => fs.rm(s.jsonl));
    expect(messages).toEqual([`${set.jsonl}: file not found`]);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
