/**
 * `iwr evaluate` end to end on a tiny task set (real task folders, real Chromium, real
 * OCR, offline judge and grounding): eval.json, evalpoints, replay.json, trace and the
 * metrics report; a missing candidate scores 0 with its reason; resume and --rescore.
 * Also: what a candidate page can reach through the evaluator's server.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { main } from "../../src/cli/main.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { assetsUrlPath, candidateMounts, stageCandidate } from "../../src/replay/candidate-serving.ts";
import { ASSET_PLACEHOLDER } from "../../src/tasks/inputs.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";
import { type TaskSetFixture, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const MODEL = "GPT-4o";
const MODEL_DIR = "gpt-4o";
let dir: string;
let set: TaskSetFixture;
let resultDir: string;

function candidateDir(id: number): string {
  return path.join(resultDir, String(id), MODEL_DIR);
}

/** The shopping list with an asset image, its link written as generation post-processing writes it. */
function candidateWithAsset(id: number): string {
  const relative = path
    .relative(candidateDir(id), path.join(set.taskDir(id), "assets"))
    .split(path.sep)
    .join("/");
  const html = shoppingListPage().replace("<h1>", `<img src="${ASSET_PLACEHOLDER}/001.png" width="32" height="32" alt="logo"><h1>`);
  return html.replaceAll(ASSET_PLACEHOLDER, relative);
}

async function iwr(...args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...parts: unknown[]) => void lines.push(parts.map(String).join(" "));
  try {
    process.exitCode = undefined;
    const code = await main(["node", "iwr", "--quiet", ...args]);
    return { code, out: lines.join("\n") };
  } finally {
    console.log = original;
    process.exitCode = undefined;
  }
}

beforeAll(async () => {
  dir = tempDir("evaluate-cli");
  set = await writeValidTaskSet(dir, { count: 2, ...SHOPPING_LIST_TASK_OPTIONS });
  resultDir = path.join(dir, "results");
  writeCandidate(candidateDir(1), candidateWithAsset(1));
  // Task 2 has no candidate at all.
});

afterAll(async () => {
  await closeSharedBrowser();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("iwr evaluate", () => {
  it("evaluates the results folder and writes eval.json, evalpoints, replay.json, trace and the report", async () => {
    const { code, out } = await iwr(
      "evaluate",
      "--data",
      set.jsonlPath,
      "--result",
      resultDir,
      "--model",
      MODEL,
      "--judge",
      "heuristic",
      "--grounding",
      "heuristic",
      "--protocol",
      "corrected",
    );
    expect(code).toBe(0);
    expect(out).toMatch(/evaluated 2, skipped 0 .* failed 0/);

    const record = readEvalRecord(path.join(candidateDir(1), "eval.json"));
    expect(record).toMatchObject({ taskId: 1, model: MODEL, totalSteps: 2, executedSteps: 2, successStep: 2 });
    expect(record.scores.ifs).toBe(1);
    expect(record.assertions).toEqual([expect.objectContaining({ actionIndex: 1, result: "Yes" })]);
    expect(record.settings).toMatchObject({ assertionJudgeKind: "heuristic", groundingKind: "heuristic", pairingMode: "aligned", protocol: "corrected" });
    expect(record.steps.map((step) => step.evalpoint)).toEqual([0, 2]);
    expect(fs.readdirSync(path.join(candidateDir(1), "evalpoints")).sort()).toEqual(["0.png", "1.png", "2.png"]);
    expect(fs.existsSync(path.join(candidateDir(1), "trace.zip"))).toBe(true);
    const replay = JSON.parse(fs.readFileSync(path.join(candidateDir(1), "replay.json"), "utf8"));
    expect(replay.steps.map((step: { target?: { text: string } }) => step.target?.text)).toEqual(["", "Add"]);
    expect(replay.incidents.filter((incident: { kind: string }) => incident.kind === "blocked-request")).toEqual([]);
    // No temp files left behind.
    expect(fs.readdirSync(candidateDir(1)).filter((name) => name.includes(".tmp"))).toEqual([]);

    const missing = readEvalRecord(path.join(candidateDir(2), "eval.json"));
    expect(missing.scores.final).toBe(0);
    expect(missing.stopReason).toMatchObject({ code: "CANDIDATE_MISSING" });

    const report = fs.readFileSync(path.join(resultDir, "reports", `${MODEL_DIR}_metrics.md`), "utf8");
    expect(report).toMatch(/^# GPT-4o metrics/);
    // Columns LFS HFS IFS ...: task 1's IFS is 100 %.
    expect(report).toMatch(/\| 1 \| [\d.]+ \| [\d.]+ \| 100\.00 \|/);
    expect(report).toMatch(/\| avg \|/);
  });

  it("skips tasks whose eval.json scored the same page, task and settings, and --rescore rebuilds the report from eval.json", async () => {
    const before = fs.statSync(path.join(candidateDir(1), "eval.json")).mtimeMs;
    const again = await iwr(
      "evaluate",
      "--data",
      set.jsonlPath,
      "--result",
      resultDir,
      "--model",
      MODEL,
      "--judge",
      "heuristic",
      "--grounding",
      "heuristic",
      "--protocol",
      "corrected",
      "--ids",
      "1",
    );
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/evaluated 0, skipped 1/);
    expect(fs.statSync(path.join(candidateDir(1), "eval.json")).mtimeMs).toBe(before);
    const rescored = await iwr("evaluate", "--rescore", "--result", resultDir, "--model", MODEL);
    expect(rescored.code).toBe(0);
    expect(rescored.out).toMatch(/rescored 2 task\(s\)/);
  });

  it("refuses bad arguments with a precise message and the usage exit code", async () => {
    const errors: string[] = [];
    const original = { error: console.error, write: process.stderr.write };
    console.error = (...parts: unknown[]) => void errors.push(parts.map(String).join(" "));
    // commander reports option errors on stderr itself.
    process.stderr.write = ((chunk: string | Uint8Array) => errors.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      expect((await iwr("evaluate", "--data", set.jsonlPath, "--result", resultDir, "--model", MODEL, "--ids", "1,x")).code).toBe(2);
      expect((await iwr("evaluate", "--data", set.jsonlPath, "--result", resultDir, "--model", MODEL, "--ids", ",")).code).toBe(2);
      expect(
        (
          await iwr(
            "evaluate",
            "--data",
            set.jsonlPath,
            "--result",
            resultDir,
            "--model",
            MODEL,
            "--ids",
            "9",
            "--judge",
            "heuristic",
            "--grounding",
            "heuristic",
          )
        ).code,
      ).toBe(2);
    } finally {
      console.error = original.error;
      process.stderr.write = original.write;
    }
    expect(errors.join("\n")).toMatch(/--ids <ids\.\.\.>' argument '1,x' is invalid\. expected task ids .* got 'x'/);
    expect(errors.join("\n")).toMatch(/argument ',' is invalid\. expected task ids like 1,2,7, got ',' \(no id in it\)/);
    expect(errors.join("\n")).toMatch(/--ids: task\(s\) 9 are not in/);
  });
});

describe("candidate serving", () => {
  it("serves the candidate and the task's assets where its links point, and nothing else", async () => {
    const folder = candidateDir(1);
    expect(assetsUrlPath(folder, path.join(set.taskDir(1), "assets"))).toMatch(/\/fixture\/1\/assets\/$/);
    const served = await stageCandidate(folder);
    expect(fs.readdirSync(served)).toEqual(["index.html"]);
    const sandbox = await openSandboxedPage({
      mounts: candidateMounts(folder, path.join(set.taskDir(1), "assets"), served),
      entry: "index.html",
      resolution: { width: 640, height: 360 },
    });
    try {
      const checkpointLink = path
        .relative(folder, path.join(set.taskDir(1), "checkpoints", "step_0.png"))
        .split(path.sep)
        .join("/");
      const statuses = await sandbox.page.evaluate(
        async (links) => {
          const results: number[] = [];
          for (const link of links) results.push((await fetch(link)).status);
          return results;
        },
        [checkpointLink, "../../fixture.jsonl", "eval.json", "replay.json", "index.html"],
      );
      // eval.json of the earlier run (it exists) is not served either; the page itself is.
      expect(fs.existsSync(path.join(folder, "eval.json"))).toBe(true);
      expect(statuses).toEqual([404, 404, 404, 404, 200]);
      const logo = await sandbox.page.locator("img[alt=logo]").evaluate((img) => (img as HTMLImageElement).naturalWidth);
      expect(logo).toBe(32);
    } finally {
      await sandbox.close();
      fs.rmSync(served, { recursive: true, force: true });
    }
  });
});
