/**
 * Issue #14 §7: the visual list's boundary in the official profile, checked on every
 * flag / failure / No configuration of a 5-action task against a written-out copy of
 * the harness's loop (evaluate.py's evaluate_single_task, as docs/protocol.md states it).
 * Our side derives success_step from the same verdicts (judge errors among them) through
 * the evaluator's own rule, so a judge "Error" that cut the list would show here.
 */
import { describe, expect, it } from "vitest";
import type { AssertionOutcome } from "../../src/evaluator/judge-queue.ts";
import { pairEvalpoints } from "../../src/evaluator/pairing.ts";
import { successStepOf } from "../../src/evaluator/task-records.ts";

type Verdict = "Yes" | "No" | "Error" | null;

/**
 * The harness, line by line: evalpoints 0..executed exist; the loop walks every action,
 * sets success_step and breaks at an assertion "No" before adding that action, and adds
 * flagged action i when evalpoint i exists. The metrics then keep success_step + 1 entries.
 */
function harnessVisualList(flags: readonly boolean[], executed: number, verdicts: readonly Verdict[]): { evalpoints: number[]; successStep: number } {
  const screenshots = new Set(Array.from({ length: executed + 1 }, (_, index) => index));
  const evalpoints = [0];
  let successStep = executed;
  for (let i = 0; i < flags.length; i += 1) {
    if (verdicts[i] === "No") {
      successStep = i;
      break;
    }
    if (flags[i] && screenshots.has(i)) evalpoints.push(i);
  }
  return { evalpoints: evalpoints.slice(0, successStep + 1), successStep };
}

interface Configuration {
  flags: boolean[];
  executed: number;
  firstNo: number | undefined;
}

/** 32 flag patterns × (executed 0..5, first No at none or any executed action) = 672. */
function allConfigurations(actions: number): Configuration[] {
  const configurations: Configuration[] = [];
  for (let mask = 0; mask < 2 ** actions; mask += 1) {
    const flags = Array.from({ length: actions }, (_, bit) => Boolean((mask >> bit) & 1));
    for (let executed = 0; executed <= actions; executed += 1) {
      for (let firstNo = -1; firstNo < executed; firstNo += 1) configurations.push({ flags, executed, firstNo: firstNo < 0 ? undefined : firstNo });
    }
  }
  return configurations;
}

/** A judged assertion as the judge queue records it; "Error" is a judge that gave no usable answer. */
function outcome(actionIndex: number, verdict: Exclude<Verdict, null>): AssertionOutcome {
  const base = { replies: [], attempts: 1, latencyMs: 0 };
  return {
    actionIndex,
    assertion: `assertion ${actionIndex}`,
    verdict: verdict === "Error" ? { ...base, result: "No", failure: { kind: "http", message: "HTTP 500" } } : { ...base, result: verdict },
  };
}

/** Our pipeline: success_step from the verdicts under the official profile, then the visual list within `boundary`. */
function ourList(configuration: Configuration, boundary: "harness" | "through-no", verdicts: readonly Verdict[] = verdictsOf(configuration)): number[] {
  const { flags, executed } = configuration;
  const judged = verdicts.flatMap((verdict, index) => (verdict === null ? [] : [outcome(index, verdict)]));
  const { successStep, stoppedByAssertion } = successStepOf(executed, judged, "official");
  const result = pairEvalpoints({
    flags,
    successStep,
    stoppedByAssertion,
    evalpointPaths: Array.from({ length: executed + 1 }, (_, index) => `evalpoints/${index}.png`),
    checkpointPaths: Array.from({ length: flags.length + 1 }, (_, index) => `step_${index}.png`),
    mode: "official",
    boundary,
  });
  return result.pairs.map((pair) => pair.evalpoint);
}

/** Every executed action is judged: the first No where the configuration puts it, Yes and "Error" elsewhere (Errors after the No too). */
function verdictsOf(configuration: Configuration): Verdict[] {
  return configuration.flags.map((_, index) =>
    index === configuration.firstNo ? "No" : index < configuration.executed ? (index % 2 === 0 ? "Yes" : "Error") : null,
  );
}

describe("visual list boundary (official profile)", () => {
  const configurations = allConfigurations(5);

  it("matches the harness's loop in all 672 configurations of a 5-action task", () => {
    expect(configurations).toHaveLength(672);
    const mismatches = configurations.filter((configuration) => {
      // Actions after the first No still executed and were judged; any verdict but No leaves the loop alone.
      const verdicts = verdictsOf(configuration);
      const harness = harnessVisualList(configuration.flags, configuration.executed, verdicts);
      expect(harness.successStep).toBe(configuration.firstNo ?? configuration.executed);
      return JSON.stringify(ourList(configuration, "harness", verdicts)) !== JSON.stringify(harness.evalpoints);
    });
    expect(mismatches).toEqual([]);
  });

  it("the corrected boundary differs from the harness in 160 of the 672 configurations", () => {
    const differing = configurations.filter(
      (configuration) => JSON.stringify(ourList(configuration, "harness")) !== JSON.stringify(ourList(configuration, "through-no")),
    );
    expect(differing).toHaveLength(160);
    // The two ways they differ: a failed action's entry (harness only) and a No action's entry (corrected only).
    const failedActionCounted = { flags: [false, true, false, false, false], executed: 1, firstNo: undefined };
    expect(ourList(failedActionCounted, "harness")).toEqual([0, 1]);
    expect(ourList(failedActionCounted, "through-no")).toEqual([0]);
    const noActionCounted = { flags: [false, true, false, false, false], executed: 5, firstNo: 1 };
    expect(ourList(noActionCounted, "harness")).toEqual([0]);
    expect(ourList(noActionCounted, "through-no")).toEqual([0, 1]);
  });
});
