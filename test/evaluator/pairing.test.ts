/**
 * Which evalpoint meets which checkpoint, in both modes, with the truncation and
 * first-"No" interaction spelled out.
 */
import { describe, expect, it } from "vitest";
import { type PairingInput, pairEvalpoints, type VisualPair } from "../../src/evaluator/pairing.ts";

const evalpoints = (count: number) => Array.from({ length: count }, (_, i) => `ep/${i}.png`);
const checkpoints = (count: number) => Array.from({ length: count }, (_, k) => `cp/step_${k}.png`);
const summary = (pairs: VisualPair[]) => pairs.map((pair) => `${pair.evalpointPath}→${pair.checkpointPath}`);

function run(input: Omit<PairingInput, "mode">) {
  return { official: pairEvalpoints({ ...input, mode: "official" }), aligned: pairEvalpoints({ ...input, mode: "aligned" }) };
}

describe("pairEvalpoints", () => {
  it("both modes on the same full trajectory: official takes the state before a flagged action, aligned the state after", () => {
    // flags [T, F, T, T], all four executed, no "No": list = ep0 + actions 0, 2, 3.
    const { official, aligned } = run({ flags: [true, false, true, true], successStep: 4, evalpointPaths: evalpoints(5), checkpointPaths: checkpoints(4) });
    expect(summary(official.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/0.png→cp/step_1.png", "ep/2.png→cp/step_2.png", "ep/3.png→cp/step_3.png"]);
    expect(summary(aligned.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/1.png→cp/step_1.png", "ep/3.png→cp/step_2.png", "ep/4.png→cp/step_3.png"]);
    expect(official.pairs.map((pair) => pair.actionIndex)).toEqual([null, 0, 2, 3]);
    expect(official.truncated).toEqual([]);
    expect(aligned.mode).toBe("aligned");
  });

  it("an assertion 'No' at index 2 with every action flagged: action 2's entry is cut by success_step + 1", () => {
    // success_step 2 → keep 3 entries of [ep0, a0, a1, a2].
    const { official, aligned } = run({ flags: [true, true, true, true], successStep: 2, evalpointPaths: evalpoints(5), checkpointPaths: checkpoints(5) });
    expect(summary(official.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/0.png→cp/step_1.png", "ep/1.png→cp/step_2.png"]);
    expect(official.truncated.map((pair) => pair.actionIndex)).toEqual([2]);
    expect(summary(aligned.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/1.png→cp/step_1.png", "ep/2.png→cp/step_2.png"]);
    expect(aligned.truncated.map((pair) => pair.evalpoint)).toEqual([3]);
  });

  it("an assertion 'No' at index 2 with action 1 unflagged: action 2's entry is position 2 and counts; action 3 never enters", () => {
    const { official, aligned } = run({ flags: [true, false, true, true], successStep: 2, evalpointPaths: evalpoints(5), checkpointPaths: checkpoints(4) });
    expect(summary(official.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/0.png→cp/step_1.png", "ep/2.png→cp/step_2.png"]);
    expect(summary(aligned.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/1.png→cp/step_1.png", "ep/3.png→cp/step_2.png"]);
    expect(official.truncated).toEqual([]);
  });

  it("early failure: action 1 failed to execute, so only action 0 can contribute", () => {
    const { official, aligned } = run({ flags: [true, true, true], successStep: 1, evalpointPaths: evalpoints(2), checkpointPaths: checkpoints(4) });
    expect(summary(official.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/0.png→cp/step_1.png"]);
    expect(summary(aligned.pairs)).toEqual(["ep/0.png→cp/step_0.png", "ep/1.png→cp/step_1.png"]);
  });

  it("no flagged action: the list holds evalpoint 0 only", () => {
    const { official, aligned } = run({ flags: [false, false, false], successStep: 3, evalpointPaths: evalpoints(4), checkpointPaths: checkpoints(1) });
    expect(summary(official.pairs)).toEqual(["ep/0.png→cp/step_0.png"]);
    expect(summary(aligned.pairs)).toEqual(["ep/0.png→cp/step_0.png"]);
  });

  it("a page that never loaded (no evalpoint) gives no pairs", () => {
    expect(pairEvalpoints({ flags: [true], successStep: 0, evalpointPaths: [], checkpointPaths: checkpoints(2), mode: "official" }).pairs).toEqual([]);
  });

  it("fails clearly on a missing checkpoint and on inconsistent counts", () => {
    expect(() =>
      pairEvalpoints({ flags: [true, true], successStep: 2, evalpointPaths: evalpoints(3), checkpointPaths: checkpoints(2), mode: "official" }),
    ).toThrow(/step_2\.png is missing/);
    expect(() => pairEvalpoints({ flags: [true], successStep: 2, evalpointPaths: evalpoints(2), checkpointPaths: checkpoints(2), mode: "official" })).toThrow(
      /exceeds the task's 1 actions/,
    );
    expect(() =>
      pairEvalpoints({ flags: [true, true], successStep: 2, evalpointPaths: evalpoints(2), checkpointPaths: checkpoints(3), mode: "official" }),
    ).toThrow(/exceeds the 1 executed actions/);
  });
});
