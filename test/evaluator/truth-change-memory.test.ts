/**
 * The judge reads a true page's change over an action once per process, however many
 * candidates meet it, and its early look (prepare) is that same reading; forgetting the
 * image readings (as bench:evaluator does between its cold and warm runs) forgets that
 * reading too, so the next judgement reads the truth again.
 */
import { afterAll, expect, it } from "vitest";
import { createHeuristicJudge } from "../../src/evaluator/judge/heuristic.ts";
import { truthReadingTallies } from "../../src/evaluator/judge/truth-change.ts";
import type { AssertionInput } from "../../src/evaluator/judge/types.ts";
import { forgetReadings } from "../../src/metrics/image-readings.ts";
import { shutdownOcr } from "../../src/metrics/ocr.ts";
import { renderPage } from "../support/evaluator-images.ts";

afterAll(() => shutdownOcr());

/** How many times the truth's reading has looked at its first stage (the whole screen) so far. */
function truthLooks(): number {
  return truthReadingTallies().stages.reduce((total, stage) => total + stage.reached, 0);
}

it("reads the truth's change once for many candidates, and again after the readings are forgotten", async () => {
  const before = await renderPage({ width: 800, height: 400, lines: [{ text: "Basket is empty", x: 40, y: 100 }] });
  const after = await renderPage({ width: 800, height: 400, lines: [{ text: "Two pears in the basket", x: 40, y: 100 }] });
  const judge = createHeuristicJudge();
  const input: AssertionInput = {
    actionIndex: 0,
    actionType: "Click",
    actionDescription: "add the pears",
    assertion: "The basket now holds 'Two pears'",
    before,
    after,
    truth: { before, after },
  };
  const start = truthLooks();
  await judge.judge(input);
  const afterFirst = truthLooks();
  expect(afterFirst).toBeGreaterThan(start);
  // A second candidate (here the same pages again) meets the same true states: nothing read.
  await judge.judge(input);
  expect(truthLooks()).toBe(afterFirst);
  forgetReadings();
  await judge.judge(input);
  expect(truthLooks()).toBeGreaterThan(afterFirst);
}, 120_000);

it("reads the truth's change in prepare, and the judgement that follows reads none of it again", async () => {
  forgetReadings();
  const before = await renderPage({ width: 800, height: 400, lines: [{ text: "No seats chosen", x: 40, y: 120 }] });
  const after = await renderPage({ width: 800, height: 400, lines: [{ text: "Seat 14C held for you", x: 40, y: 120 }] });
  const judge = createHeuristicJudge();
  const assertion = "The page confirms 'Seat 14C' is held";
  const start = truthLooks();
  // Once the replay is over, prepare starts no step: the judgement asks for what it needs.
  const over = new AbortController();
  over.abort();
  await judge.prepare!([{ assertion, truth: { before, after } }], over.signal);
  expect(truthLooks()).toBe(start);
  await judge.prepare!([{ assertion, truth: { before, after } }], new AbortController().signal);
  const prepared = truthLooks();
  expect(prepared).toBeGreaterThan(start);
  const verdict = await judge.judge({
    actionIndex: 0,
    actionType: "Click",
    actionDescription: "hold the seat",
    assertion,
    before,
    after,
    truth: { before, after },
  });
  expect(truthLooks()).toBe(prepared);
  expect(verdict.result).toBe("Yes");
}, 120_000);
