/**
 * Temporary files: a killed evaluation leaves its staged page copy and half-written
 * evalpoints inside the candidate folder (never in /tmp), and the next run sweeps what
 * writers that are gone left behind, and nothing a live writer still owns.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { FOREIGN_TEMP_AGE_MS, parseTempName, sweepAbandonedTemps, tempPathBeside } from "../../src/files/atomic.ts";
import { runEvaluation } from "../../src/run/evaluate.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";
import { type TaskSetFixture, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const BIN = path.resolve("bin/iwr.js");
let dir: string;
let set: TaskSetFixture;

beforeAll(async () => {
  dir = tempDir("leftovers");
  set = await writeValidTaskSet(dir, { count: 1, ...SHOPPING_LIST_TASK_OPTIONS });
});
afterAll(async () => {
  await closeSharedBrowser();
  fs.rmSync(dir, { recursive: true, force: true });
});

const tempEntries = (folder: string): string[] => fs.readdirSync(folder).filter((name) => parseTempName(name) !== undefined);
const iwrTempsInTmp = (): string[] => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith("iwr-candidate-"));

/** A temp name as another writer would have made it: this host or another, this pid, created at `createdMs`. */
function tempName(target: string, options: { host?: string; pid: number; createdMs: number }): string {
  const ours = parseTempName(path.basename(tempPathBeside(path.join(dir, target))))!;
  return `.${target}.${options.host ?? ours.host}~${options.pid}.${options.createdMs}.abc123.tmp`;
}

describe("abandoned temporary files", () => {
  it("are swept when their writer is gone, kept while it lives or while another machine's are recent", async () => {
    const folder = fs.mkdtempSync(path.join(dir, "sweep-"));
    const sleeper = spawn("sleep", ["30"]);
    try {
      const now = Date.now();
      const dead = tempName("eval.json", { pid: 2 ** 22 - 3, createdMs: now });
      const live = tempName("trace.zip", { pid: sleeper.pid!, createdMs: now });
      const recentForeign = tempName("evalpoints", { host: "other-machine", pid: 12, createdMs: now });
      const oldForeign = tempName("served", { host: "other-machine", pid: 12, createdMs: now - FOREIGN_TEMP_AGE_MS - 60_000 });
      for (const name of [dead, live, recentForeign]) fs.writeFileSync(path.join(folder, name), "partial");
      fs.mkdirSync(path.join(folder, oldForeign));
      fs.writeFileSync(path.join(folder, ".DS_Store"), "not ours");
      expect(sweepAbandonedTemps(folder).sort()).toEqual([dead, oldForeign].sort());
      expect(fs.readdirSync(folder).sort()).toEqual([".DS_Store", live, recentForeign].sort());
    } finally {
      sleeper.kill();
    }
  });

  it("a killed evaluation leaves them in the candidate folder only, and the next run removes them and finishes", async () => {
    const resultDir = path.join(dir, "results");
    const candidateDir = writeCandidate(path.join(resultDir, "1", "m"), shoppingListPage());
    const tmpBefore = iwrTempsInTmp();
    const child = spawn(
      process.execPath,
      [BIN, "--quiet", "evaluate", "--data", set.jsonlPath, "--result", resultDir, "--model", "m", "--judge", "heuristic", "--grounding", "heuristic"],
      {
        stdio: "ignore",
      },
    );
    // Killed the moment the replay has staged the page and started its evalpoints.
    const deadline = Date.now() + 60_000;
    while (tempEntries(candidateDir).length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const left = tempEntries(candidateDir);
    expect(left.map((name) => parseTempName(name)?.target).sort()).toEqual(["evalpoints", "served"]);
    expect(fs.existsSync(path.join(candidateDir, "eval.json"))).toBe(false);
    expect(iwrTempsInTmp()).toEqual(tmpBefore);

    const summary = await runEvaluation({ dataPath: set.jsonlPath, resultDir, model: "m", judge: "heuristic", grounding: "heuristic", pairing: "aligned" });
    expect(summary.tasks.map((task) => task.status)).toEqual(["evaluated"]);
    expect(tempEntries(candidateDir)).toEqual([]);
    expect(fs.existsSync(path.join(candidateDir, "eval.json"))).toBe(true);
    expect(iwrTempsInTmp()).toEqual(tmpBefore);
  });
});
