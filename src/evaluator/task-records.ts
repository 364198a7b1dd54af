/**
 * From a finished replay and its judged assertions to one eval record per pairing mode
 * (docs/protocol.md §3.4–§3.6): success_step under the profile's rule for judge failures,
 * the visual list within the profile's boundary, the scored pairs, the harness's keys.
 * Pure of the page: it reads screenshots and checkpoints from disk, nothing else.
 */
import type { ErrorRecord } from "../errors.ts";
import { type ProtocolProfile, profileRules } from "../protocol.ts";
import type { ReplayResult } from "../replay/replay.ts";
import type { Task } from "../tasks/schema.ts";
import type { EvalInputKeys } from "./eval-keys.ts";
import { buildEvalRecord, type EvalRecord, type EvalSettings } from "./eval-record.ts";
import type { HarnessAssertion } from "./harness-keys.ts";
import type { AssertionOutcome } from "./judge-queue.ts";
import { pairEvalpoints } from "./pairing.ts";
import type { PairingMode } from "./settings.ts";
import { scoreVisualPairs, type VisualScorers } from "./visual-scorers.ts";

/**
 * The result a verdict is recorded with: a judge that gave no usable answer is "Error"
 * under the official profile (the harness's record, which does not cut success_step)
 * and "No" under corrected.
 */
function recordedResult(outcome: AssertionOutcome, profile: ProtocolProfile): "Yes" | "No" | "Error" {
  return outcome.verdict.failure && profileRules(profile).judgeFailure === "error" ? "Error" : outcome.verdict.result;
}

/** success_step and whether an assertion's No set it (rather than the executed count). */
export function successStepOf(
  executed: number,
  assertions: readonly AssertionOutcome[],
  profile: ProtocolProfile,
): { successStep: number; stoppedByAssertion: boolean } {
  const firstNo = assertions
    .filter((outcome) => outcome.actionIndex < executed && recordedResult(outcome, profile) === "No")
    .reduce((lowest, outcome) => Math.min(lowest, outcome.actionIndex), executed);
  return { successStep: firstNo, stoppedByAssertion: firstNo < executed };
}

/** The harness's assertion_results: one entry per action, null where no assertion was judged. */
function harnessAssertions(
  actionsCount: number,
  assertions: readonly AssertionOutcome[],
  evalpointPaths: readonly string[],
  profile: ProtocolProfile,
): (HarnessAssertion | null)[] {
  const byAction = new Map(assertions.map((outcome) => [outcome.actionIndex, outcome]));
  return Array.from({ length: actionsCount }, (_, index) => {
    const outcome = byAction.get(index);
    if (!outcome) return null;
    return {
      result: recordedResult(outcome, profile),
      assertion: outcome.assertion,
      response: outcome.verdict.replies.at(-1) ?? outcome.verdict.failure?.message ?? "",
      thinking: outcome.verdict.think ?? "",
      prev_img_path: evalpointPaths[index] ?? "",
      curr_img_path: evalpointPaths[index + 1] ?? "",
    };
  });
}

function stopReasonOf(replay: ReplayResult, actionsCount: number): ErrorRecord | undefined {
  if (replay.stoppedAt === undefined && !replay.error) return undefined;
  const step = replay.stoppedAt !== undefined ? replay.steps[replay.stoppedAt] : undefined;
  if (step) {
    return {
      code: "ACTION_FAILED",
      message: `action ${step.index} (${step.type}): ${step.reason ?? "failed"}`,
      details: { actionIndex: step.index, of: actionsCount },
    };
  }
  return replay.error;
}

function assertionEntries(assertions: readonly AssertionOutcome[], profile: ProtocolProfile): EvalRecord["assertions"] {
  return assertions.map((outcome) => {
    const { actionIndex, assertion, verdict, repeats } = outcome;
    const think = verdict.failure ? `judge failed (${verdict.failure.kind}): ${verdict.failure.message}` : verdict.think;
    const reply = verdict.replies.length > 0 ? verdict.replies.join("\n---\n") : undefined;
    return {
      actionIndex,
      assertion,
      result: recordedResult(outcome, profile),
      ...(think !== undefined ? { think } : {}),
      ...(reply !== undefined ? { reply } : {}),
      ...(repeats ? { repeats } : {}),
    };
  });
}

export interface TaskRecordsInput {
  task: Task;
  model: string;
  replay: ReplayResult;
  assertions: readonly AssertionOutcome[];
  /** evalpoints/<i>.png by i, as written. */
  evalpointPaths: readonly string[];
  pairingModes: readonly PairingMode[];
  profile: ProtocolProfile;
  scorers: VisualScorers;
  settings: Omit<EvalSettings, "pairingMode" | "source">;
  /** The input hashes of each mode's record, in pairingModes' order. */
  inputs: readonly EvalInputKeys[];
}

export interface TaskRecords {
  records: Array<{ mode: PairingMode; record: EvalRecord }>;
  successStep: number;
  stopReason?: ErrorRecord;
}

export async function scoreTaskRecords(input: TaskRecordsInput): Promise<TaskRecords> {
  const { task, replay, assertions, profile } = input;
  const actions = task.truth.actions;
  const rules = profileRules(profile);
  const { successStep, stoppedByAssertion } = successStepOf(replay.executed, assertions, profile);
  const stopReason = stopReasonOf(replay, actions.length);
  const records: TaskRecords["records"] = [];
  for (const [position, mode] of input.pairingModes.entries()) {
    const pairing = pairEvalpoints({
      flags: actions.map((action) => action.visual_evaluation_flag),
      successStep,
      evalpointPaths: input.evalpointPaths,
      checkpointPaths: task.truth.checkpointPaths,
      mode,
      boundary: rules.visualBoundary,
      stoppedByAssertion,
    });
    // The harness scores the whole list and its metrics cut it; corrected scores only what counts.
    const scored = await scoreVisualPairs(rules.scoreCutEntries ? [...pairing.pairs, ...pairing.truncated] : pairing.pairs, input.scorers, {
      textlessPairs: rules.textlessPairs,
    });
    const inputKeys = input.inputs[position];
    records.push({
      mode,
      record: buildEvalRecord({
        taskId: task.id,
        model: input.model,
        totalSteps: actions.length,
        executedSteps: replay.executed,
        successStep,
        ...(stopReason ? { stopReason } : {}),
        assertions: assertionEntries(assertions, profile),
        steps: scored.slice(0, pairing.pairs.length),
        cutSteps: scored.slice(pairing.pairs.length),
        harnessAssertions: harnessAssertions(actions.length, assertions, input.evalpointPaths, profile),
        pairing,
        settings: input.settings,
        ...(inputKeys ? { inputs: inputKeys } : {}),
      }),
    });
  }
  return { records, successStep, ...(stopReason ? { stopReason } : {}) };
}
