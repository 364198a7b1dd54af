/**
 * §3.5 / "Known quirk": which evalpoint is compared with which reference checkpoint.
 *
 * The visual list is evalpoint 0 plus one entry per flagged action (visual_evaluation_flag)
 * within the boundary, and list position k is compared with `step_<k>.png`:
 *
 * - pairing `official` reproduces the published harness: the flagged action at 0-based
 *   index i contributes evalpoint i — the state BEFORE that action.
 * - pairing `aligned` contributes evalpoint i + 1 — the state AFTER that action — so the
 *   k-th flagged action's result meets the k-th flagged checkpoint.
 *
 * Which flagged actions are within the boundary (a profile rule, src/protocol.ts):
 * - `harness` (profile official), the harness's loop: walking the actions in order, stop
 *   at the one whose assertion answered No, before adding it; otherwise add a flagged
 *   action i while i ≤ the executed count — so the action that failed to execute still
 *   adds its entry (under official pairing its evalpoint, the state before it, exists).
 * - `through-no` (profile corrected): the actions that executed, up to and including the
 *   first No — action i with a No did execute, and the §3.6 cut decides what counts.
 *
 * Then §3.6 keeps the first success_step + 1 entries. Concretely, flags [T, T, T] with a
 * No at index 2 (success_step 2): through-no gives 4 entries and cuts action 2's; the
 * harness gives 3 and cuts nothing. An entry whose evalpoint does not exist (aligned
 * pairing, the failed action) is left out.
 *
 * The function is pure: paths in, pairs out.
 */
import { IwrError } from "../errors.ts";
import type { ProfileRules } from "../protocol.ts";
import type { PairingMode } from "./settings.ts";

export interface PairingInput {
  /** visual_evaluation_flag of every action of the task, in order (length = total_steps). */
  flags: readonly boolean[];
  /** Actions executed before a failure or the first assertion "No" (IWR success_step). */
  successStep: number;
  /**
   * evalpoints/<i>.png by i: index 0 is the initial state, index i ≥ 1 the state after
   * action i − 1. Its length − 1 is the number of actions that executed; empty when the
   * page never loaded.
   */
  evalpointPaths: readonly string[];
  /** checkpoints/step_<k>.png by k. */
  checkpointPaths: readonly string[];
  mode: PairingMode;
  /** Which flagged actions may enter the list (see above); default `through-no`. */
  boundary?: VisualBoundary;
  /** Whether success_step was cut by an assertion that answered No (rather than set by the executed count). */
  stoppedByAssertion?: boolean;
}

export type VisualBoundary = ProfileRules["visualBoundary"];

export interface VisualPair {
  /** Position k in the visual list (compared with step_<k>). */
  position: number;
  /** The action that contributed this entry; null for position 0 (the initial state). */
  actionIndex: number | null;
  evalpoint: number;
  evalpointPath: string;
  checkpointPath: string;
}

export interface PairingResult {
  mode: PairingMode;
  /** Pairs that count: the first successStep + 1 entries. */
  pairs: VisualPair[];
  /** Entries dropped by the success_step + 1 cut (kept for the record, never scored). */
  truncated: VisualPair[];
}

function checkInput(input: PairingInput): void {
  const executed = input.evalpointPaths.length - 1;
  if (!Number.isInteger(input.successStep) || input.successStep < 0) {
    throw new IwrError("EVALUATOR", `pairing: successStep: expected a non-negative integer, got ${input.successStep}`);
  }
  if (input.successStep > input.flags.length) {
    throw new IwrError("EVALUATOR", `pairing: successStep ${input.successStep} exceeds the task's ${input.flags.length} actions`);
  }
  if (executed > input.flags.length) {
    throw new IwrError("EVALUATOR", `pairing: ${input.evalpointPaths.length} evalpoints for ${input.flags.length} actions (at most actions + 1)`);
  }
  if (executed >= 0 && input.successStep > executed) {
    throw new IwrError("EVALUATOR", `pairing: successStep ${input.successStep} exceeds the ${executed} executed actions`);
  }
}

/** Indices of the flagged actions inside the boundary, in order. */
function flaggedWithinBoundary(input: PairingInput, executed: number): number[] {
  const last =
    (input.boundary ?? "through-no") === "harness"
      ? // The harness breaks at the No before adding that action; otherwise i ≤ executed.
        input.stoppedByAssertion
        ? input.successStep - 1
        : executed
      : Math.min(input.successStep, executed - 1);
  const indices: number[] = [];
  for (let index = 0; index <= Math.min(last, input.flags.length - 1); index += 1) if (input.flags[index]) indices.push(index);
  return indices;
}

export function pairEvalpoints(input: PairingInput): PairingResult {
  checkInput(input);
  const executed = input.evalpointPaths.length - 1;
  if (executed < 0) return { mode: input.mode, pairs: [], truncated: [] };

  const entries: { actionIndex: number | null; evalpoint: number }[] = [{ actionIndex: null, evalpoint: 0 }];
  for (const index of flaggedWithinBoundary(input, executed)) {
    const evalpoint = input.mode === "official" ? index : index + 1;
    if (evalpoint <= executed) entries.push({ actionIndex: index, evalpoint });
  }

  const all = entries.map((entry, position): VisualPair => {
    const checkpointPath = input.checkpointPaths[position];
    if (checkpointPath === undefined) {
      throw new IwrError(
        "EVALUATOR",
        `reference checkpoint step_${position}.png is missing ` +
          `(the task has ${input.checkpointPaths.length} checkpoints, the visual list needs step_${position})`,
        { position },
      );
    }
    const evalpointPath = input.evalpointPaths[entry.evalpoint];
    if (evalpointPath === undefined) throw new IwrError("EVALUATOR", `evalpoint ${entry.evalpoint} is missing`);
    return { position, actionIndex: entry.actionIndex, evalpoint: entry.evalpoint, evalpointPath, checkpointPath };
  });
  const keep = input.successStep + 1;
  return { mode: input.mode, pairs: all.slice(0, keep), truncated: all.slice(keep) };
}
