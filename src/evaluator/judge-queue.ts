/**
 * The assertion judge's queue during a replay (docs/protocol.md §3.3): as each evalpoint
 * is taken, the assertion of the action that led to it (if it has one) is sent to the
 * judge with the evalpoint before it, so judging runs while the replay waits out its
 * settle times. A judge that throws is that step's recorded failure ("No"), never an
 * unhandled rejection. An empty assertion is never judged; one of only whitespace is
 * judged or skipped as the profile says (the harness judges any non-empty string).
 */
import { toErrorRecord } from "../errors.ts";
import type { ProfileRules } from "../protocol.ts";
import type { Action } from "../tasks/schema.ts";
import type { AssertionJudge, AssertionVerdict } from "./judge/types.ts";

export interface AssertionOutcome {
  actionIndex: number;
  assertion: string;
  /** The scored verdict (the first judgement). */
  verdict: AssertionVerdict;
  /** With judge repeats: every judgement's result, the scored one first (the judge's own spread). */
  repeats?: Array<"Yes" | "No">;
}

export class AssertionQueue {
  private readonly shots: Buffer[] = [];
  private readonly pending: Array<Promise<AssertionOutcome>> = [];

  constructor(
    private readonly judge: AssertionJudge,
    private readonly actions: readonly Action[],
    /** Judgements per assertion (default 1): the first is scored, the others measure the judge's spread. */
    private readonly repeats = 1,
    /** An assertion of only whitespace: judged (the harness) or skipped. */
    private readonly blankAssertion: ProfileRules["blankAssertion"] = "skipped",
  ) {}

  private isJudged(assertion: string): boolean {
    return this.blankAssertion === "judged" ? assertion.length > 0 : assertion.trim().length > 0;
  }

  private judgeOnce(input: Parameters<AssertionJudge["judge"]>[0]): Promise<AssertionVerdict> {
    return this.judge.judge(input).catch(
      (error: unknown): AssertionVerdict => ({
        result: "No",
        failure: { kind: "error", message: toErrorRecord(error).message },
        replies: [],
        attempts: 1,
        latencyMs: 0,
      }),
    );
  }

  /** Evalpoint `index` was taken: judge action `index - 1`'s assertion, if it has one. */
  readonly onEvalpoint = (index: number, png: Buffer): void => {
    this.shots[index] = png;
    const action = this.actions[index - 1];
    const before = this.shots[index - 1];
    if (index === 0 || !action || !before || !this.isJudged(action.logical_assertion)) return;
    const assertion = action.logical_assertion;
    const input = { actionIndex: index - 1, actionType: action.type, actionDescription: action.parameters.description, assertion, before, after: png };
    const judgements = Array.from({ length: Math.max(1, this.repeats) }, (_, sample) => this.judgeOnce(sample === 0 ? input : { ...input, sample }));
    this.pending.push(
      Promise.all(judgements).then(([verdict, ...others]) => ({
        actionIndex: index - 1,
        assertion,
        verdict: verdict!,
        ...(others.length > 0 ? { repeats: [verdict!.result, ...others.map((other) => other.result)] } : {}),
      })),
    );
  };

  /** Every verdict asked for so far, in action order. */
  async settled(): Promise<AssertionOutcome[]> {
    return (await Promise.all(this.pending)).sort((a, b) => a.actionIndex - b.actionIndex);
  }
}
