/**
 * `iwr mutate` and `iwr selfcheck` from the command line: mutants land in the results
 * layout with their record, the self-check writes selfcheck.json beside each page and
 * tells a mutant from the true page; usage errors exit 2 before any work, a missing page
 * is that task's failure (exit 1), recorded beside it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { referencePageHtml } from "../../src/calibration/calibration.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { writeCandidate } from "../support/evaluator-replay-fixtures.ts";

const DATA = "tasks/iwr-mini.jsonl";
const TASK = "4";
let dir: string;
const output: string[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-selfcheck-cli-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
  output.length = 0;
  process.exitCode = undefined;
});

const iwr = (...args: string[]): Promise<number> => runIwrCapturing(output, args);

describe("iwr mutate", () => {
  it("writes the chosen mutants of a task's true page with their records", async () => {
    const result = path.join(dir, "results");
    expect(await iwr("mutate", "--data", DATA, "--result", result, "--ids", TASK, "--operators", "freeze-after:1,no-script")).toBe(0);
    for (const folder of ["mutant-freeze-after-1", "mutant-no-script"]) {
      const record = JSON.parse(fs.readFileSync(path.join(result, TASK, folder, "mutant.json"), "utf8"));
      expect(record.source.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(fs.readFileSync(path.join(result, TASK, folder, "index.html"), "utf8")).toMatch(/data-iwr-mutant|Content-Security-Policy/);
    }
    expect(JSON.parse(fs.readFileSync(path.join(result, TASK, "mutant-freeze-after-1", "mutant.json"), "utf8"))).toMatchObject({
      operator: "freeze-after",
      parameter: 1,
      label: "freeze-after:1",
    });
    expect(output.join("\n")).toMatch(/wrote 2 mutant page\(s\)/);
  });

  it("a misspelt operator is a usage error, and nothing is written", async () => {
    const result = path.join(dir, "bad-operator");
    expect(await iwr("mutate", "--data", DATA, "--result", result, "--ids", TASK, "--operators", "freeze-after:two")).toBe(2);
    expect(output.join("\n")).toMatch(/freeze-after needs a gesture count/);
    expect(fs.existsSync(result)).toBe(false);
  });
});

describe("iwr selfcheck", () => {
  it("checks the true page and a mutant: selfcheck.json beside each, the mutant lower", async () => {
    const result = path.join(dir, "results");
    // The true page as a model's candidate, and the no-script mutant written above.
    const trueDir = path.join(result, TASK, "true-page");
    const task = (await loadTasks(DATA)).find((entry) => String(entry.id) === TASK)!;
    writeCandidate(trueDir, referencePageHtml(task, trueDir));
    expect(await iwr("selfcheck", "--data", DATA, "--result", result, "--model", "true-page", "--ids", TASK)).toBe(0);
    expect(await iwr("selfcheck", "--data", DATA, "--result", result, "--model", "mutant-no-script", "--ids", TASK)).toBe(0);
    const truePage = JSON.parse(fs.readFileSync(path.join(trueDir, "selfcheck.json"), "utf8"));
    const mutant = JSON.parse(fs.readFileSync(path.join(result, TASK, "mutant-no-script", "selfcheck.json"), "utf8"));
    expect(truePage.trajectory).toBe("given");
    expect(truePage.selfScore).toBeGreaterThan(0.8);
    expect(mutant.selfScore).toBeLessThan(truePage.selfScore - 0.3);
    expect(mutant.findings[0].kind).toMatch(/^(no-change|step-failed|wrong-change)$/);
    expect(output.join("\n")).toMatch(/task 4: selfScore 0\.\d{4}/);
  });

  it("inferred actions: from the file given; a file that is not a list of actions is a usage error naming it", async () => {
    const result = path.join(dir, "results");
    const actions = path.join(dir, "actions.yaml");
    fs.writeFileSync(actions, `"${TASK}":\n  - type: Click\n    description: the 'Launch rocket' button\n`);
    expect(
      await iwr("selfcheck", "--data", DATA, "--result", result, "--model", "true-page", "--ids", TASK, "--trajectory", "inferred", "--actions", actions),
    ).toBe(0);
    const record = JSON.parse(fs.readFileSync(path.join(result, TASK, "true-page", "selfcheck.json"), "utf8"));
    expect(record.trajectory).toBe("inferred");
    expect(record.steps[0]).toMatchObject({ executed: false, groundingFailed: true });

    const bad = path.join(dir, "bad-actions.yaml");
    fs.writeFileSync(bad, `"${TASK}":\n  - type: Hover\n    description: somewhere\n`);
    expect(await iwr("selfcheck", "--data", DATA, "--result", result, "--model", "true-page", "--trajectory", "inferred", "--actions", bad)).toBe(2);
    expect(output.join("\n")).toContain("bad-actions.yaml");
    output.length = 0;
    expect(await iwr("selfcheck", "--data", DATA, "--result", result, "--model", "true-page", "--trajectory", "inferred")).toBe(2);
    expect(output.join("\n")).toMatch(/needs --actions/);
  });

  it("a task without a page fails alone, recorded beside where the page should be", async () => {
    const result = path.join(dir, "results");
    expect(await iwr("selfcheck", "--data", DATA, "--result", result, "--model", "nobody", "--ids", TASK)).toBe(1);
    const error = JSON.parse(fs.readFileSync(path.join(result, TASK, "nobody", "selfcheck-error.json"), "utf8"));
    expect(error.error.message).toMatch(/index\.html/);
  });
});
