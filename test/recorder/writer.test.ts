import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nextFreeTaskId, readTaskIds, writeTaskLine } from "../../src/tasks/writer.ts";
import { makeScratchDir } from "../support/recorder-fixtures.ts";

const scratch = makeScratchDir("writer");
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function line(id: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    classification: { interaction_complexity: "L1", visual_complexity: "V1", domain: "d" },
    recording_details: { resolution: "1280x720" },
    source_website: `site-${id}`,
    action_sequence: [{ type: "Scroll", parameters: { description: "scroll" }, logical_assertion: "", visual_evaluation_flag: false }],
    ...extra,
  };
}

describe("task line writer", () => {
  it("creates the file, keeps lines sorted by id and other lines byte for byte", () => {
    const file = path.join(scratch, "sorted", "set.jsonl");
    expect(nextFreeTaskId(file)).toBe(1);
    writeTaskLine(file, line(5));
    const handWritten =
      `{"id":2,  "classification":{"interaction_complexity":"L1","visual_complexity":"V1","domain":"d"},"recording_details":{"resolution":"1280x720"},` +
      `"source_website":"s","action_sequence":[{"type":"Press","parameters":{"description":"p","key":"Enter"},"visual_evaluation_flag":false}]}`;
    fs.writeFileSync(file, fs.readFileSync(file, "utf8") + handWritten + "\n");
    writeTaskLine(file, line(3));
    expect(readTaskIds(file)).toEqual([2, 3, 5]);
    expect(fs.readFileSync(file, "utf8").split("\n")[0]).toBe(handWritten);
    expect(nextFreeTaskId(file)).toBe(6);
    expect(fs.readdirSync(path.dirname(file))).toEqual(["set.jsonl"]);
  });

  it("refuses a duplicate id unless replacing, and replaces in place", () => {
    const file = path.join(scratch, "dup.jsonl");
    writeTaskLine(file, line(1));
    writeTaskLine(file, line(2));
    const before = fs.readFileSync(file, "utf8");
    expect(() => writeTaskLine(file, line(1, { source_website: "new" }))).toThrow(/already holds task id 1; pass --force/);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
    writeTaskLine(file, line(1, { source_website: "new" }), { replace: true });
    const lines = fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text) as { id: number; source_website: string });
    expect(lines.map((entry) => [entry.id, entry.source_website])).toEqual([
      [1, "new"],
      [2, "site-2"],
    ]);
  });

  it("validates the line first and never rewrites a file holding a malformed line", () => {
    const file = path.join(scratch, "bad.jsonl");
    expect(() => writeTaskLine(file, line(1, { action_sequence: [] }))).toThrow(/action_sequence: action_sequence must hold at least one action/);
    expect(fs.existsSync(file)).toBe(false);
    fs.writeFileSync(file, `${JSON.stringify(line(1))}\n{"id": 2,\n`);
    const before = fs.readFileSync(file, "utf8");
    expect(() => writeTaskLine(file, line(3))).toThrow(/bad\.jsonl:2: not valid JSON/);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
  });
});
