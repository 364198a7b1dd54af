/** What each step of a mutant deserves, from DOM facts, with the true page as the ground truth. */
import { describe, expect, it } from "vitest";
import { deservedVerdicts, type PageFacts } from "../../src/mutants/oracle.ts";
import { action } from "../support/evaluator-replay-fixtures.ts";

const facts = (text: string, extra = ""): PageFacts => ({ text, signature: `${text}|${extra}` });
const actions = [
  action({ type: "Click", description: "the 'Add' button", assertion: "A new item 'Pears' appears" }),
  action({ type: "Click", description: "the 'Sort' button", assertion: "The list is sorted" }),
  action({ type: "Scroll", description: "scroll down", assertion: "" }),
];
const reference = [facts("0 items"), facts("Pears 1 items"), facts("Pears 1 items", "sorted"), facts("Pears 1 items", "sorted scrolled")];

describe("deserved verdicts", () => {
  it("a mutant that behaves as the true page deserves Yes on each judged step; a step without assertion is not judged", () => {
    expect(deservedVerdicts({ actions, spec: { operator: "restyle" }, reference, mutant: reference, executed: 3 }).map((entry) => entry?.verdict)).toEqual([
      "Yes",
      "Yes",
      undefined,
    ]);
  });

  it("frozen steps deserve No; steps before the freeze Yes; steps not executed are not judged", () => {
    const frozen = [facts("0 items"), facts("Pears 1 items"), facts("Pears 1 items"), facts("Pears 1 items")];
    expect(
      deservedVerdicts({ actions, spec: { operator: "freeze-after", parameter: 1 }, reference, mutant: frozen, executed: 2 }).map((entry) => entry?.verdict),
    ).toEqual(["Yes", "No", undefined]);
    expect(deservedVerdicts({ actions, spec: { operator: "lively-wrong" }, reference, mutant: reference, executed: 1 })[0]?.verdict).toBe("No");
  });

  it("nothing happened where the true page changed: No; the value the assertion names falsified: No", () => {
    const still = [facts("0 items"), facts("0 items"), facts("0 items"), facts("0 items")];
    expect(deservedVerdicts({ actions, spec: { operator: "no-script" }, reference, mutant: still, executed: 2 })[0]).toEqual({
      verdict: "No",
      why: "the reference changed on this step; the mutant did not",
    });
    const wrong = [facts("0 items"), facts("Crnef 6 items"), facts("Crnef 6 items", "sorted"), facts("Crnef 6 items", "sorted scrolled")];
    const verdicts = deservedVerdicts({ actions, spec: { operator: "wrong-state" }, reference, mutant: wrong, executed: 3 });
    expect(verdicts[0]).toEqual({ verdict: "No", why: "'Pears' shown by the reference, not by the mutant" });
    expect(verdicts[1]?.verdict).toBe("Yes");
  });
});
