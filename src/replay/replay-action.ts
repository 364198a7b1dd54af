/**
 * The action a replay takes: what to do and to what, in words, as the evaluator (the
 * true trajectory, with where a key's focus was recorded) and the self-check (actions
 * inferred from the video) each hand it over.
 */
import type { KeyFocus } from "../browser/key-focus.ts";
import type { ActionType } from "../tasks/inputs.ts";
import type { Action } from "../tasks/schema.ts";

/** One action to replay: what to do and to what, in words (the grounder finds the element). */
export interface ReplayAction {
  type: ActionType;
  /** The target in natural language, e.g. "the blue 'Add to cart' button". */
  description: string;
  /** Type: the text to enter, when known (the benchmark's own lines carry it only in the description). */
  text?: string;
  /** Press: the key, when known (else the grounder names it from the description). */
  key?: string;
  /** Press: where the focus was when the key was recorded (the task line's `key_focus`), so the replay gives it the same way. */
  keyFocus?: KeyFocus;
}

/** A task line's action as the replay needs it: what to do and to what (the given track's view of an action). */
export function replayActionOf(action: Action): ReplayAction {
  const { description, text, key } = action.parameters;
  return { type: action.type, description, ...(text !== undefined ? { text } : {}), ...(key !== undefined ? { key } : {}) };
}

/**
 * A task line's action with what the recording noted about performing it (where a key's
 * focus was): the evaluator's view of the true trajectory, which is the truth's side.
 */
export function recordedReplayActionOf(action: Action): ReplayAction {
  return { ...replayActionOf(action), ...(action.key_focus ? { keyFocus: action.key_focus } : {}) };
}
