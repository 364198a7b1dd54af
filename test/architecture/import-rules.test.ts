/**
 * The house's import rules (.dependency-cruiser.cjs, docs/architecture.md) hold on the
 * tree, and they do bite: a synthetic tree that breaks them is reported rule by rule.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const CHECKOUT = path.resolve(import.meta.dirname, "../..");
const CRUISER = path.join(CHECKOUT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");
const CONFIG = path.join(CHECKOUT, ".dependency-cruiser.cjs");

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

async function violationsIn(dir: string): Promise<Violation[]> {
  const { stdout } = await run(process.execPath, [CRUISER, "src", "agents", "--config", CONFIG, "--output-type", "json"], {
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-import-rules-"));
  scratch.push(dir);
  const all = {
    "tsconfig.json": JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", allowImportingTsExtensions: true, noEmit: true } }),
    ...files,
  };
  for (const [name, text] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe("import rules", () => {
  it("hold on the whole tree: no circle, no arrow back up, agents see no truth", async () => {
    const violations = await violationsIn(CHECKOUT);
    expect(violations.map((entry) => `${entry.rule.name}: ${entry.from} -> ${entry.to}`)).toEqual([]);
  });

  it("report an agent that reads the task loader or the evaluator, a library that reaches the CLI, and a type-only circle", async () => {
    const dir = tree({
      "agents/reader.ts": [
        'import { loadTasks } from "../src/tasks/loader.ts";',
        'import { judge } from "../src/evaluator/judge.ts";',
        'import type { TaskInputs } from "../src/tasks/inputs.ts";',
        "export const use = [loadTasks, judge] as unknown as TaskInputs;",
      ].join("\n"),
      "src/tasks/loader.ts": "export const loadTasks = 1;\n",
      "src/tasks/inputs.ts": "export interface TaskInputs { id: number }\n",
      "src/evaluator/judge.ts": "export const judge = 2;\n",
      "src/media/frames.ts": 'import { table } from "../cli/table.ts";\nexport const frames = table;\n',
      "src/cli/table.ts": "export const table = 3;\n",
      "src/browser/a.ts": 'import type { B } from "./b.ts";\nexport interface A { b?: B }\n',
      "src/browser/b.ts": 'import type { A } from "./a.ts";\nexport interface B { a?: A }\n',
    });
    const found = (await violationsIn(dir)).map((entry) => `${entry.rule.name}: ${entry.from} -> ${entry.to}`);
    expect(found).toEqual(
      expect.arrayContaining([
        "agents-see-no-truth: agents/reader.ts -> src/tasks/loader.ts",
        "agents-see-no-truth: agents/reader.ts -> src/evaluator/judge.ts",
        "only-the-cli-imports-the-cli: src/media/frames.ts -> src/cli/table.ts",
        "libraries-stay-below-the-application: src/media/frames.ts -> src/cli/table.ts",
      ]),
    );
    expect(found.some((line) => line.startsWith("no-circular: src/browser/"))).toBe(true);
    // What a generator may see is allowed.
    expect(found.filter((line) => line.includes("src/tasks/inputs.ts"))).toEqual([]);
  });

  it("report any module but the agent runner that reaches oracle feedback (the task's truth for an agent)", async () => {
    const dir = tree({
      "src/run/oracle-feedback.ts": "export const oracle = 1;\n",
      "src/run/agent.ts": 'import { oracle } from "./oracle-feedback.ts";\nexport const run = oracle;\n',
      "src/experiment/arms.ts": 'import { oracle } from "../run/oracle-feedback.ts";\nexport const arm = oracle;\n',
      "agents/graph.ts": "export const graph = 4;\n",
    });
    const found = (await violationsIn(dir)).map((entry) => `${entry.rule.name}: ${entry.from} -> ${entry.to}`);
    expect(found).toEqual(["oracle-feedback-only-through-the-agent-runner: src/experiment/arms.ts -> src/run/oracle-feedback.ts"]);
  });
});
