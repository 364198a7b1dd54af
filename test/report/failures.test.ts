/**
 * The failure rules (src/report/failures.ts): a cell's first failing step and its kind,
 * decided from the records' structured fields, and the summary across cells. The records
 * here are shaped like the evaluator's (eval.json, replay.json) with words of no bundled
 * task: the rules read codes, indices and outcomes, never the wording.
 */
import { describe, expect, it } from "vitest";
import type { EvalRecord } from "../../src/evaluator/eval-record.ts";
import { type FailureCell, type FailureInput, failureSummary, firstFailure, type ReplayDigest } from "../../src/report/failures.ts";

const ACTIONS = ["Click", "Type", "Press", "Scroll"];

/** The fields of eval.json the rules read; the rest of a record does not matter to them. */
function evaluation(parts: Partial<EvalRecord> & Pick<EvalRecord, "successStep" | "executedSteps">): EvalRecord {
  return { totalSteps: ACTIONS.length, assertions: [], ...parts } as EvalRecord;
}

function replay(steps: ReplayDigest["steps"], extra: Partial<ReplayDigest> = {}): ReplayDigest {
  return { steps, ...extra } as ReplayDigest;
}

const made = (parts: Omit<FailureInput, "pageMade" | "actionTypes">): FailureInput => ({ pageMade: true, actionTypes: ACTIONS, ...parts });

describe("firstFailure", () => {
  it("is undefined when every step passed", () => {
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 4, executedSteps: 4 }) }))).toBeUndefined();
  });

  it("names the judge's No on an action that ran, with the judge's reason", () => {
    const failure = firstFailure(
      made({
        evaluation: evaluation({
          successStep: 1,
          executedSteps: 4,
          assertions: [
            { actionIndex: 0, assertion: "the kettle icon turns teal", result: "Yes" },
            { actionIndex: 1, assertion: "the field shows 'marmalade'", result: "No", think: "the field is still empty" },
          ],
        }),
      }),
    );
    expect(failure).toEqual({ step: 1, actionType: "Type", kind: "judge-no", detail: "judge No: the field is still empty" });
  });

  it("tells a judge that gave no answer from one that said No", () => {
    const failure = firstFailure(
      made({
        evaluation: evaluation({
          successStep: 0,
          executedSteps: 2,
          assertions: [{ actionIndex: 0, assertion: "a toast reads 'saved'", result: "Error", think: "judge failed (parse): no verdict" }],
        }),
      }),
    );
    expect(failure?.kind).toBe("judge-error");
  });

  it("calls a target the grounding could not find a grounding failure: no element, an element not on the page, no key", () => {
    const noElement = replay([
      { index: 0, type: "Click", ok: true },
      { index: 1, type: "Type", ok: false, reason: "nothing to type into", grounding: { index: -1 } },
    ]);
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 1, executedSteps: 1 }), replay: noElement }))?.kind).toBe("grounding-failed");
    const notOnPage = replay([{ index: 0, type: "Click", ok: false, reason: "element 41 is not listed", grounding: { index: 41 } }]);
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 0, executedSteps: 0 }), replay: notOnPage }))).toMatchObject({
      step: 0,
      actionType: "Click",
      kind: "grounding-failed",
    });
    const noKey = replay([
      { index: 0, type: "Click", ok: true },
      { index: 1, type: "Type", ok: true },
      { index: 2, type: "Press", ok: false, reason: "no key could be named", grounding: { index: -1 } },
    ]);
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 2, executedSteps: 2 }), replay: noKey }))?.kind).toBe("grounding-failed");
  });

  it("calls an action that found its target but failed or did nothing an action failure", () => {
    const clicked = replay([{ index: 0, type: "Click", ok: false, reason: "the click threw", grounding: { index: 3 }, target: { tag: "a" } }]);
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 0, executedSteps: 0 }), replay: clicked }))?.kind).toBe("action-failed");
    const scrolled = replay([
      { index: 0, type: "Click", ok: true },
      { index: 1, type: "Type", ok: true },
      { index: 2, type: "Press", ok: true },
      { index: 3, type: "Scroll", ok: false, reason: "the window did not move" },
    ]);
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 3, executedSteps: 3 }), replay: scrolled }))).toMatchObject({
      step: 3,
      actionType: "Scroll",
      kind: "action-failed",
    });
  });

  it("calls a page torn down for a timeout, or a step that used up the action limit, a timeout", () => {
    const hung = replay([{ index: 0, type: "Click", ok: false, reason: "action failed: click did not finish" }], {
      tornDown: { code: "PAGE_TIMEOUT", message: "the page stopped responding" },
    });
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 0, executedSteps: 0 }), replay: hung }))).toMatchObject({ step: 0, kind: "timeout" });
    const slow = replay([{ index: 0, type: "Click", ok: false, reason: "too slow", durationMs: 31_000, grounding: { index: 2 }, target: {} }]);
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 0, executedSteps: 0 }), replay: slow }))?.kind).toBe("timeout");
  });

  it("calls a page that crashed, left its server or never loaded a page error (no action reached when it never loaded)", () => {
    const crashed = replay([{ index: 0, type: "Click", ok: false, reason: "action failed: target closed" }], {
      tornDown: { code: "PAGE_CRASHED", message: "the renderer crashed" },
    });
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 0, executedSteps: 0 }), replay: crashed }))).toMatchObject({
      step: 0,
      kind: "page-error",
    });
    const neverLoaded = replay([], { loadError: { code: "BROWSER", message: "net::ERR_ABORTED" } });
    expect(firstFailure(made({ evaluation: evaluation({ successStep: 0, executedSteps: 0 }), replay: neverLoaded }))).toMatchObject({
      step: null,
      kind: "page-error",
    });
  });

  it("calls a cell without a page 'no page' and one the evaluator left unscored 'not evaluated'", () => {
    expect(firstFailure({ pageMade: false, cellError: "generate: MODEL: the endpoint refused", actionTypes: ACTIONS })).toMatchObject({
      step: null,
      kind: "no-page",
    });
    expect(firstFailure(made({ cellError: "evaluate: BROWSER: could not start" }))).toMatchObject({ step: null, kind: "not-evaluated" });
  });
});

describe("failureSummary", () => {
  const tasks = [
    { id: 7, site: "pottery", interaction: "L2", visual: "V1", actionTypes: ["Click", "Click", "Type"] },
    { id: 8, site: "tram", interaction: "L3", visual: "V2", actionTypes: ["Scroll", "Click"] },
  ];
  const arms = [
    { name: "truth", kind: "reference" },
    { name: "model", kind: "single-pass" },
  ];
  const cells: FailureCell[] = [
    { arm: "truth", repeat: 0, taskId: 7, ifs: 1, final: 1 },
    { arm: "model", repeat: 0, taskId: 7, ifs: 1 / 3, final: 0.4, failure: { step: 1, actionType: "Click", kind: "judge-no", detail: "" } },
    { arm: "model", repeat: 1, taskId: 7, ifs: 0, final: 0.1, failure: { step: 0, actionType: "Click", kind: "grounding-failed", detail: "" } },
    { arm: "truth", repeat: 0, taskId: 8, ifs: 0.5, final: 0.6, failure: { step: 1, actionType: "Click", kind: "judge-no", detail: "" } },
    { arm: "model", repeat: 0, taskId: 8, ifs: 0, final: 0, failure: { step: null, kind: "no-page", detail: "" } },
  ];
  const summary = failureSummary(cells, tasks, arms);

  it("counts each failing cell once, by its first failing step's kind, per arm", () => {
    expect(summary).toMatchObject({ cells: 5, passed: 1 });
    expect(summary.byKind.map((row) => [row.kind, row.cells, row.byArm])).toEqual([
      ["judge-no", 2, { model: 1, truth: 1 }],
      ["grounding-failed", 1, { model: 1 }],
      ["no-page", 1, { model: 1 }],
    ]);
  });

  it("counts actions reached and failed per type and interaction class", () => {
    const row = (type: string, interaction: string) => summary.byAction.find((entry) => entry.actionType === type && entry.interaction === interaction);
    // Task 7: the passing cell reached all three; one failed at its 2nd Click, one at its 1st.
    expect(row("Click", "L2")).toMatchObject({ reached: 2 + 2 + 1, failed: 2, byKind: { "judge-no": 1, "grounding-failed": 1 } });
    expect(row("Type", "L2")).toMatchObject({ reached: 1, failed: 0 });
    // Task 8: the cell without a page reached nothing.
    expect(row("Scroll", "L3")).toMatchObject({ reached: 1, failed: 0 });
    expect(row("Click", "L3")).toMatchObject({ reached: 1, failed: 1, failureRate: 1 });
  });

  it("lists the tasks no cell passed, and those only calibration arms passed", () => {
    expect(summary.unpassedTasks).toEqual([
      { taskId: 8, site: "tram", interaction: "L3", visual: "V2", cells: 2, bestFinal: 0.6, bestArm: "truth", kinds: "judge No ×1, no page ×1" },
    ]);
    expect(summary.passedOnlyByCalibration).toEqual([{ taskId: 7, arms: ["truth"] }]);
  });
});
