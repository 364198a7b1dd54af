/**
 * A `module:` arm whose generator never answers: the cell fails at the run's time limit
 * with a message naming the module, the generator's signal is aborted, and the run goes
 * on to the other arm's cells. A page made without a model is scored while a model arm's
 * generation still runs. And a run folder reused by a changed config reports only the
 * current config's cells.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadExperimentConfig } from "../../src/experiment/config.ts";
import { runExperiment } from "../../src/experiment/run.ts";
import { writeReport } from "../../src/report/report.ts";
import { DATA, evaluatorBlock, experimentFixture, TEST_MS, writeConfig } from "../support/experiment.ts";

const fixture = experimentFixture("cell-edges");

describe("a module arm that hangs", () => {
  it(
    "fails its cell at the time limit, aborts the generator's signal, and the run goes on",
    async () => {
      const aborted = path.join(fixture.dir(), "aborted.txt");
      const modulePath = path.join(fixture.dir(), "configs", "hangs.ts");
      fs.mkdirSync(path.dirname(modulePath), { recursive: true });
      fs.writeFileSync(
        modulePath,
        `import fs from "node:fs";
export async function generate(_inputs, context) {
  context.signal.addEventListener("abort", () => fs.writeFileSync(${JSON.stringify(aborted)}, "aborted"));
  await new Promise(() => undefined);
}
`,
      );
      const configFile = writeConfig(
        path.join(fixture.dir(), "configs", "hangs.yaml"),
        `name: hangs
tasks:
  file: ${DATA}
  ids: [2]
out: ../runs/hangs
${evaluatorBlock}arms:
  - name: mine
    kind: module:hangs.ts
  - name: blank
    kind: blank
`,
      );
      const summary = await runExperiment(loadExperimentConfig(configFile), { moduleTimeoutMs: 1500 });
      const byArm = new Map(summary.cells.map((cell) => [cell.arm, cell]));
      expect(byArm.get("mine")).toMatchObject({ status: "failed" });
      expect(byArm.get("mine")?.error?.message).toMatch(/the generator in .*hangs\.ts did not finish within 1\.5 s/);
      expect(byArm.get("blank")).toMatchObject({ status: "finished" });
      expect(summary.failed).toBe(1);
      expect(fs.readFileSync(aborted, "utf8")).toBe("aborted");
    },
    TEST_MS,
  );
});

describe("the two stages of a run", () => {
  it(
    "scores a calibration page while a generator still runs, with one cell generating at a time",
    async () => {
      const runDir = path.join(fixture.dir(), "runs", "stages");
      const modulePath = path.join(fixture.dir(), "configs", "waits.ts");
      fs.mkdirSync(path.dirname(modulePath), { recursive: true });
      // Answers once the blank arm's cell is finished (its cell.json written), or says it never was.
      fs.writeFileSync(
        modulePath,
        `import fs from "node:fs";
import path from "node:path";
const finished = (dir) => fs.existsSync(dir) && fs.readdirSync(dir, { recursive: true }).some((name) => path.basename(String(name)) === "cell.json");
export async function generate() {
  const deadline = Date.now() + 60_000;
  while (!finished(${JSON.stringify(path.join(runDir, "arms", "blank"))})) {
    if (Date.now() > deadline) return "<!doctype html><title>never</title><h1>the blank cell was never scored</h1>";
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return "<!doctype html><title>after</title><h1>the blank cell was scored first</h1>";
}
`,
      );
      const configFile = writeConfig(
        path.join(fixture.dir(), "configs", "stages.yaml"),
        `name: stages
tasks:
  file: ${DATA}
  ids: [2]
out: ../runs/stages
concurrency: 1
${evaluatorBlock}arms:
  - name: mine
    kind: module:waits.ts
  - name: blank
    kind: blank
`,
      );
      const config = loadExperimentConfig(configFile);
      expect(config.evaluatorWorkers).toBe(1);
      const summary = await runExperiment(config);
      expect(summary.failed).toBe(0);
      const armDir = path.join(runDir, "arms", "mine");
      const pages = (fs.readdirSync(armDir, { recursive: true }) as string[]).filter((name) => path.basename(name) === "index.html");
      expect(pages).toHaveLength(1);
      expect(fs.readFileSync(path.join(armDir, pages[0]!), "utf8")).toContain("the blank cell was scored first");
    },
    TEST_MS,
  );
});

describe("a run folder reused by a changed config", () => {
  it(
    "reports only the cells of the current config, not those an earlier config left in the folder",
    async () => {
      const write = (ids: string) =>
        writeConfig(
          path.join(fixture.dir(), "configs", "changing.yaml"),
          `name: changing
tasks:
  file: ${DATA}
  ids: [${ids}]
out: ../runs/changing
${evaluatorBlock}arms:
  - name: blank
    kind: blank
`,
        );
      const first = await runExperiment(loadExperimentConfig(write("2")));
      expect(first.cells.map((cell) => cell.taskId)).toEqual([2]);
      const second = await runExperiment(loadExperimentConfig(write("6")));
      // Task 2's cell is still in the folder, finished.
      expect(fs.existsSync(path.join(first.runDir, "arms", "blank", "repeat-0", "2"))).toBe(true);
      const { data } = await writeReport(second.runDir);
      expect(data.cells.map((cell) => cell.taskId)).toEqual([6]);
      expect(data.arms.find((arm) => arm.name === "blank")).toMatchObject({ tasks: 1, cells: 1 });
    },
    TEST_MS,
  );
});
