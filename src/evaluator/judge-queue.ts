/**
 * The assertion judge's queue during a replay (docs/protocol.md §3.3): as each evalpoint
 * is taken, the assertion of the action that led to it (if it has one) is sent to the
 * judge with the evalpoint before it, so judging runs while the replay waits out its
 * settle times. A judge that throws is that step's recorded failure ("No"), never an
 * unhandled rejection. An empty assertion is never judged; one of only whitespace is
 * judged or skipped as the profile says (the harness judges any non-empty string).
 */
import fs from "node:fs/promises";
import type { ScreenText } from "../browser/screen-text.ts";
import { toErrorRecord } from "../errors.ts";
import type { ProfileRules } from "../protocol.ts";
import type { Action } from "../tasks/schema.ts";
import type { AssertionInput, AssertionJudge, AssertionVerdict } from "./judge/types.ts";

export interface AssertionOutcome {
  actionIndex: number;
  assertion: string;
  /** The scored verdict (the first judgement). */
  verdict: AssertionVerdict;
  /** With judge repeats: every judgement's result, the scored one first (the judge's own spread). */
  repeats?: Array<"Yes" | "No">;
}

/** A judgement that broke (the judge threw, or its inputs could not be read): "No", with the reason. */
function failedJudgement(error: unknown): AssertionVerdict {
  return { result: "No", failure: { kind: "error", message: toErrorRecord(error).message }, replies: [], attempts: 1, latencyMs: 0 };
}

export class AssertionQueue {
  private readonly shots: Buffer[] = [];
  private readonly texts: Array<ScreenText | undefined> = [];
  private readonly pending: Array<Promise<AssertionOutcome>> = [];
  /** The judge's early readings of the true page (prepareJudge), settled or not. */
  private preparing: Promise<void> = Promise.resolve();
  /** Aborted once the verdicts are asked for: the early readings start no further step. */
  private readonly replayOver = new AbortController();

  constructor(
    private readonly judge: AssertionJudge,
    private readonly actions: readonly Action[],
    /** Judgements per assertion (default 1): the first is scored, the others measure the judge's spread. */
    private readonly repeats = 1,
    /** An assertion of only whitespace: judged (the harness) or skipped. */
    private readonly blankAssertion: ProfileRules["blankAssertion"] = "skipped",
    /**
     * The true page's recorded states, when the task has them and the judge reads them: index 0
     * the initial state, index i the state after action i (the offline judge's evidence).
     */
    private readonly truthStates?: readonly string[],
  ) {}

  private isJudged(assertion: string): boolean {
    return this.blankAssertion === "judged" ? assertion.length > 0 : assertion.trim().length > 0;
  }

  /** The true page before and after action `actionIndex`, read from the task's states (none when it has none). */
  private async truthAround(actionIndex: number): Promise<{ before: Buffer; after: Buffer } | undefined> {
    const [before, after] = [this.truthStates?.[actionIndex], this.truthStates?.[actionIndex + 1]];
    if (!before || !after) return undefined;
    const [beforePng, afterPng] = await Promise.all([fs.readFile(before), fs.readFile(after)]);
    return { before: beforePng, after: afterPng };
  }

  /**
   * Hands the judge every judged step's true states at once, as the task's evaluation
   * begins (AssertionJudge.prepare), when it reads them. A state that cannot be read is
   * left out here; its step's judgement says why. settled() stops them from starting
   * further steps (a candidate that failed early never asks for the rest) and waits for
   * those started, so none outlives the task's evaluation.
   */
  prepareJudge(): void {
    const { judge } = this;
    if (!judge.prepare || !this.truthStates) return;
    const steps = this.actions.flatMap((action, index) => (this.isJudged(action.logical_assertion) ? [{ assertion: action.logical_assertion, index }] : []));
    const reads = steps.map(async ({ assertion, index }) => ({ assertion, truth: await this.truthAround(index).catch(() => undefined) }));
    this.preparing = Promise.all(reads)
      .then((read) =>
        judge.prepare?.(
          read.flatMap(({ assertion, truth }) => (truth ? [{ assertion, truth }] : [])),
          this.replayOver.signal,
        ),
      )
      .catch(() => undefined);
  }

  private judgeOnce(input: Parameters<AssertionJudge["judge"]>[0]): Promise<AssertionVerdict> {
    return this.judge.judge(input).catch(failedJudgement);
  }

  /** Evalpoint `index` was taken (with the screen's text when the replay read it): judge action `index - 1`'s assertion, if it has one. */
  readonly onEvalpoint = (index: number, png: Buffer, text?: ScreenText): void => {
    this.shots[index] = png;
    this.texts[index] = text;
    const action = this.actions[index - 1];
    const before = this.shots[index - 1];
    if (index === 0 || !action || !before || !this.isJudged(action.logical_assertion)) return;
    const assertion = action.logical_assertion;
    const beforeText = this.texts[index - 1];
    const base: AssertionInput = {
      actionIndex: index - 1,
      actionType: action.type,
      actionDescription: action.parameters.description,
      ...(action.type === "Type" && action.parameters.text ? { typedText: action.parameters.text } : {}),
      assertion,
      before,
      after: png,
      ...(beforeText ? { beforeText } : {}),
      ...(text ? { afterText: text } : {}),
    };
    const judged = this.truthAround(index - 1).then(
      (truth) => {
        const input = truth ? { ...base, truth } : base;
        return Promise.all(Array.from({ length: Math.max(1, this.repeats) }, (_, sample) => this.judgeOnce(sample === 0 ? input : { ...input, sample })));
      },
      // A recorded state that cannot be read now: this step's judgement failed, and says why.
      (error: unknown) => [failedJudgement(error)],
    );
    this.pending.push(
      judged.then(([verdict, ...others]) => ({
        actionIndex: index - 1,
        assertion,
        verdict: verdict!,
        ...(others.length > 0 ? { repeats: [verdict!.result, ...others.map((other) => other.result)] } : {}),
      })),
    );
  };

  /** Every verdict asked for so far, in action order. */
  async settled(): Promise<AssertionOutcome[]> {
    this.replayOver.abort();
    await this.preparing;
    return (await Promise.all(this.pending)).sort((a, b) => a.actionIndex - b.actionIndex);
  }
}
