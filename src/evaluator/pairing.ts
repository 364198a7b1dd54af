/**
 * §3.5 / "Known quirk": which evalpoint is compared with which reference checkpoint.
 *
 * The visual list is evalpoint 0 plus one entry per flagged action (visual_evaluation_flag)
 * among the actions considered, and list position k is compared with `step_<k>.png`:
 *
 * - `official` reproduces the published harness: the flagged action at 0-based index i
 *   contributes evalpoint i — the state BEFORE that action.
 * - `aligned` contributes evalpoint i + 1 — the state AFTER that action — so the k-th
 *   flagged action's result meets the k-th flagged checkpoint.
 *
 * Actions considered: those that executed (evalpoints 1..n exist for n executed actions)
 * up to and including the first assertion "No". An assertion "No" at index i makes
 * success_step = i while action i did execute, so "up to the first No" is read as
 * inclusive and the §3.6 cut — keep the first success_step + 1 entries — decides what
 * counts. Concretely (flags, "No" at index 2, success_step 2):
 *   [T, T, T] → 4 entries, the last (action 2's) cut: it was the failing step;
 *   [F, T, T] → 3 entries, none cut: action 2's entry is position 2 = success_step.
 * With no "No", success_step = executed actions and nothing is ever cut.
 *
 * The function is pure: paths in, pairs out.
 */
import { IwrError } from "../errors.ts";
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
}

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

export function pairEvalpoints(input: PairingInput): PairingResult {
  checkInput(input);
  const executed = input.evalpointPaths.length - 1;
  if (executed < 0) return { mode: input.mode, pairs: [], truncated: [] };

  // Actions whose state may enter the list: executed, and not past the first "No".
  const lastConsidered = Math.min(input.successStep, executed - 1);
  const entries: { actionIndex: number | null; evalpoint: number }[] = [{ actionIndex: null, evalpoint: 0 }];
  for (let index = 0; index <= lastConsidered; index += 1) {
    if (!input.flags[index]) continue;
    entries.push({ actionIndex: index, evalpoint: input.mode === "official" ? index : index + 1 });
  }

  const all = entries.map((entry, position): VisualPair => {
    const checkpointPath = input.checkpointPaths[position];
    if (checkpointPath === undefined) {
      throw new IwrError("EVALUATOR", `reference checkpoint step_${position}.png is missing (the task has ${input.checkpointPaths.length} checkpoints, the visual list needs step_${position})`, { position });
    }
    const evalpointPath = input.evalpointPaths[entry.evalpoint];
    if (evalpointPath === undefined) throw new IwrError("EVALUATOR", `evalpoint ${entry.evalpoint} is missing`);
    return { position, actionIndex: entry.actionIndex, evalpoint: entry.evalpoint, evalpointPath, checkpointPath };
  });
  const keep = input.successStep + 1;
  return { mode: input.mode, pairs: all.slice(0, keep), truncated: all.slice(keep) };
}
