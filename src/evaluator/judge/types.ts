/**
 * The assertion judge (docs/protocol.md §3.3): after an executed action with a
 * non-empty logical assertion, decide from the screenshots before and after whether
 * the assertion holds. Two implementations share this interface: `llm` (a VLM, the
 * benchmark's way) and `heuristic` (offline: pixel change + OCR of named strings).
 */
import type { ScreenText } from "../../browser/screen-text.ts";

export type JudgeKind = "llm" | "heuristic";

export interface AssertionInput {
  /** 0-based index of the action the assertion follows. */
  actionIndex: number;
  actionType: string;
  actionDescription: string;
  /** The text a Type action typed (the action's own parameter, as the replay typed it). */
  typedText?: string;
  assertion: string;
  /** evalpoint `actionIndex` (the page before the action). */
  before: Buffer;
  /** evalpoint `actionIndex + 1` (the page after it). */
  after: Buffer;
  /** Which repeat of this judgement (judge repeats, for the judge's own noise): part of the request's cache key. 0 or absent for the scored one. */
  sample?: number;
  /** The page's screen text as a person reads it (src/browser/screen-text.ts), when the replay read it: before and after the action. */
  beforeText?: ScreenText;
  afterText?: ScreenText;
  /**
   * The true page before and after the action (the task's recorded states), when the task
   * has them. Only the offline judge reads them; the LLM judge, as the benchmark's, sees the
   * candidate's screenshots alone.
   */
  truth?: { before: Buffer; after: Buffer };
}

/** Why a judge could not give an answer; the step then counts as failed. */
export interface JudgeFailure {
  /** `error`: the judge itself broke (an image it could not read, OCR failing). */
  kind: "unparsable" | "empty" | "http" | "error";
  message: string;
}

/** What the offline judge measured, kept so a verdict can be checked by eye. */
export interface HeuristicEvidence {
  impliesChange: boolean;
  changedPixels: number;
  changedFraction: number;
  /**
   * Literal strings and numbers the assertion names, each with its role (description-text.ts),
   * whether it was read (on the new screen; on the old one for `was`) and whether it is new there.
   * `decisive`: a quoted literal (must be read); otherwise a number named in prose (reported only).
   */
  literals: Array<{ literal: string; role?: string; found: boolean; similarity: number; isNew?: boolean; decisive: boolean; inScreenText?: boolean }>;
  /** The OCR text of the new screen (only when literals were checked). */
  ocrText?: string;
  /** Whether the candidate's screen text (from its DOM) was read beside OCR. */
  screenText?: boolean;
  /** What the true page showed around the action, when the task recorded its states. */
  truth?: {
    changedPixels: number;
    changedFraction: number;
    /** Colours its change brought. */
    colours: string[];
    /** Each literal's fate on the true page, and whether it stands where the true page changed. */
    literals: Array<{ literal: string; fate: "appeared" | "went" | "kept" | "unread"; nearChange: boolean }>;
  };
  /** Colours the candidate's change brought (with truth only). */
  candidateColours?: string[];
  /** The named thing near which both the true page and the candidate changed (a change without new text). */
  anchor?: string;
  /** Which evidence decided the verdict. */
  decidedBy?: "change" | "controls" | "literals" | "newness" | "location" | "extent" | "colour";
}

export interface AssertionVerdict {
  /** "Yes" only when the judge answered Yes; a failed judge counts as "No". */
  result: "Yes" | "No";
  think?: string;
  /** Set when the judge never produced a usable answer (retries exhausted). */
  failure?: JudgeFailure;
  /** Every raw reply, one per attempt (the error message for an HTTP failure). */
  replies: string[];
  attempts: number;
  requestHashes?: string[];
  evidence?: HeuristicEvidence;
  latencyMs: number;
}

export interface AssertionJudge {
  readonly kind: JudgeKind;
  /** Prompt name → sha256 of its template (empty for the heuristic). */
  readonly promptHashes: Readonly<Record<string, string>>;
  /** The offline judge's rules, versioned: a record scored under other rules is scored again, and never averaged with these. */
  readonly rulesVersion?: string;
  judge(input: AssertionInput): Promise<AssertionVerdict>;
  /**
   * Starts reading what the judge will want of the true page around these steps, as the
   * task's evaluation begins, rather than as each candidate screen comes: the readings run
   * side by side with the replay instead of one step at a time behind it. Once `stop` is
   * aborted (the replay is over: every step it reached has asked for its own reading) no
   * further step is started. Resolves once the readings started have settled; never
   * rejects (a reading that failed is made again when its step is judged).
   */
  prepare?(steps: readonly TruthStep[], stop: AbortSignal): Promise<void>;
}

/** A judged step's assertion and the true page's states before and after its action. */
export interface TruthStep {
  assertion: string;
  truth: { before: Buffer; after: Buffer };
}
