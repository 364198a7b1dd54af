import { describe, expect, it } from "vitest";
import { StageTallies, stageTalliesTable } from "../../src/evaluator/judge/stage-tallies.ts";

describe("a staged reading's tallies", () => {
  it("keeps every stage's counters in the order the stages run, from zero", () => {
    const tallies = new StageTallies(["coarse pass", "fine pass"], ["reached", "found"]);
    tallies.add("fine pass", "reached");
    tallies.add("fine pass", "reached");
    tallies.add("fine pass", "found");
    tallies.add("coarse pass", "reached", 3);
    expect(tallies.snapshot()).toEqual([
      { stage: "coarse pass", reached: 3, found: 0 },
      { stage: "fine pass", reached: 2, found: 1 },
    ]);
  });

  it("hands out copies: a snapshot does not move when counting goes on", () => {
    const tallies = new StageTallies(["only pass"], ["reached"]);
    const earlier = tallies.snapshot();
    tallies.add("only pass", "reached");
    expect(earlier).toEqual([{ stage: "only pass", reached: 0 }]);
  });

  it("refuses a stage it does not know, naming the ones it does", () => {
    const tallies = new StageTallies(["coarse pass", "fine pass"], ["reached"]);
    expect(() => tallies.add("medium pass", "reached")).toThrow(/no reading stage named 'medium pass' \(stages: coarse pass; fine pass\)/);
  });

  it("prints a Markdown table with a column per counter and closing rows in the last column", () => {
    const tallies = new StageTallies(["coarse pass", "fine pass"], ["reached", "asked", "settled"]);
    tallies.add("coarse pass", "reached", 4);
    tallies.add("coarse pass", "asked", 8);
    tallies.add("coarse pass", "settled", 5);
    tallies.add("fine pass", "reached");
    const table = stageTalliesTable({
      heading: "reading, by stage",
      columns: [
        ["reached", "reaching it"],
        ["asked", "readings asked"],
        ["settled", "settled"],
      ],
      tallies: tallies.snapshot(),
      closingRows: [["left open", 2]],
    });
    expect(table.split("\n")).toEqual([
      "| reading, by stage | reaching it | readings asked | settled |",
      "|---|---:|---:|---:|",
      "| coarse pass | 4 | 8 | 5 |",
      "| fine pass | 1 | 0 | 0 |",
      "| left open | | | 2 |",
    ]);
  });
});
