/**
 * Hostile and odd configs are refused before any work, with exit 2, a message that names
 * the file and quotes little of any value: an oversized file, too many arms, a huge name,
 * a flood of bad arms, arm names that are one folder on Linux only, and a `results:`
 * folder holding links out of it.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runIwrCapturing } from "../support/cli.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";
import { evaluatorBlock } from "../support/experiment.ts";

const DATA = path.resolve("tasks/iwr-mini.jsonl");
let dir: string;
beforeAll(() => {
  dir = tempDir("bad-configs");
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function run(name: string, body: string): Promise<{ code: number; output: string }> {
  const file = path.join(dir, `${name}.yaml`);
  fs.writeFileSync(file, body);
  const output: string[] = [];
  const code = await runIwrCapturing(output, ["run", file, "--out", path.join(dir, `run-${name}`)]);
  vi.restoreAllMocks();
  return { code, output: output.join("\n") };
}

const head = `tasks:\n  file: ${DATA}\n  ids: [1]\n${evaluatorBlock}`;
const arm = (name: string, kind = "blank") => `  - name: ${JSON.stringify(name)}\n    kind: ${kind}\n`;

describe("a config that cannot be run", () => {
  it("a file over 1 MiB is refused unread", async () => {
    const { code, output } = await run("huge", `${head}arms:\n${arm("a")}# ${"padding ".repeat(300_000)}\n`);
    expect(code).toBe(2);
    expect(output).toMatch(/huge\.yaml: the experiment config is 2\.3 MiB; at most 1 MiB is read/);
  });

  it("more than 100 arms is refused", async () => {
    const arms = Array.from({ length: 150 }, (_, index) => arm(`arm-${index}`)).join("");
    const { code, output } = await run("many-arms", `${head}arms:\n${arms}`);
    expect(code).toBe(2);
    expect(output).toMatch(/many-arms\.yaml:\d+:\d+: arms: expected at most 100 item\(s\), got a list of 150 items/);
  });

  it("a 100,000-character name is quoted in part, and a flood of problems is listed in part", async () => {
    const longName = await run("long-name", `name: ${"n".repeat(100_000)}\n${head}arms:\n${arm("a")}`);
    expect(longName.code).toBe(2);
    expect(longName.output).toContain("(100000 characters)");
    expect(longName.output.length).toBeLessThan(2000);
    const badArms = Array.from({ length: 90 }, (_, index) => arm(`arm-${index}`, `telepathy-${"t".repeat(1000)}`)).join("");
    const flood = await run("flood", `${head}arms:\n${badArms}`);
    expect(flood.code).toBe(2);
    expect(flood.output).toMatch(/flood\.yaml: 90 problems/);
    expect(flood.output).toMatch(/… and 60 more/);
    expect(flood.output.length).toBeLessThan(20_000);
  });

  for (const [label, name, reason] of [
    ["a Windows device name", "CON", /device name Windows reserves/],
    ["a device name with an extension", "nul.txt", /device name Windows reserves/],
    ["a trailing space", "agent ", /ends with a space or a dot/],
    ["a decomposed accent (the NFD twin of 'café')", "cafe\u0301", /not in Unicode NFC form/],
    ["a right-to-left override", "single\u202Eexe", /bidirectional control character/],
  ] as const) {
    it(`an arm name with ${label} is refused with its file and line`, async () => {
      const { code, output } = await run(`name-${label.replace(/\W+/g, "-")}`, `${head}arms:\n${arm("fine")}${arm(name)}`);
      expect(code).toBe(2);
      expect(output).toMatch(/\.yaml:\d+:\d+: arms\[1\]\.name: cannot be used as a folder name: /);
      expect(output).toMatch(reason);
    });
  }

  it("a results: folder holding a link out of it is refused, naming the link", async () => {
    const results = path.join(dir, "harness-results");
    fs.mkdirSync(path.join(results, "1"), { recursive: true });
    fs.writeFileSync(path.join(results, "1", "index.html"), "<!doctype html><p>page</p>");
    fs.symlinkSync("/etc", path.join(results, "1", "styles"));
    const { code, output } = await run("linked", `${head}arms:\n${arm("harness", `results:${results}`)}`);
    expect(code).toBe(2);
    expect(output).toMatch(/linked\.yaml:\d+:\d+: arms\[0\]\.kind: results folder .* holds symbolic links that lead out of it/);
    expect(output).toContain(`${path.join(results, "1", "styles")} → /etc`);
    expect(fs.existsSync(path.join(dir, "run-linked", "arms"))).toBe(false);
  });
});
