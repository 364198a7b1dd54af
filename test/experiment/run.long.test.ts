/**
 * `iwr run` end to end: a small config (two bundled tasks; every arm kind) against a
 * local OpenAI-compatible server answering from a script (a fixture: what it answers is
 * chosen here, never presented as a result), real Chromium, real OCR. Then the report's
 * numbers against the eval.json files, report.html opened in Chromium (per-task rows, the
 * worst steps with their images, the line pointing to iwr view), and a warm rerun.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../../src/browser/launch.ts";
import { referencePagePath } from "../../src/calibration/calibration.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { viewCommand } from "../../src/report/render-shared.ts";
import { ASSET_PLACEHOLDER } from "../../src/tasks/inputs.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, storyboardReply } from "../support/agent-scripts.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, evaluatorBlock, experimentFixture, minimalPageReply, readJson, TEST_MS, writeConfig } from "../support/experiment.ts";

const TASK_IDS = [1, 2];
const fixture = experimentFixture("experiment");
let tasks: Task[];
beforeAll(async () => {
  tasks = (await loadTasks(DATA)).filter((task) => TASK_IDS.includes(task.id));
});
const first = () => tasks[0]!;

/** A results folder laid out as the Python harness leaves it: `<dir>/<id>/<model-dir>/index.html`, assets linked from elsewhere. */
function harnessResults(root: string): string {
  for (const task of tasks) {
    const pageDir = path.join(root, String(task.id), "some-model");
    fs.mkdirSync(pageDir, { recursive: true });
    // The harness resolves the placeholder against its own data folder, not ours.
    const html = fs.readFileSync(referencePagePath(task), "utf8").split(ASSET_PLACEHOLDER).join(`../../../data/${task.id}/assets`);
    fs.writeFileSync(path.join(pageDir, "index.html"), html);
    fs.writeFileSync(path.join(pageDir, "eval.json"), '{"the harness\'s own": true}');
  }
  return root;
}

describe("iwr run", () => {
  it(
    "runs every arm kind on two tasks; report.json agrees with the eval.json files; " +
      "report.html renders offline with a row per task and the worst steps with their images",
    async () => {
      // Model answers are small pages that fail early (what they score is not the point here, and
      // they keep the replays short); the agent's revision differs from its draft, so two drafts are scored.
      const model = scriptedAgentModel({
        generate: [minimalPageReply("single pass")],
        analyze: [storyboardReply(first().line.action_sequence.map(replayActionOf))],
        draft: [minimalPageReply("first draft")],
        critique: [CRITIQUE_REPLY],
        revise: [minimalPageReply("revised draft")],
      });
      fixture.server().setReplyFunction(model.reply);
      const results = harnessResults(path.join(fixture.dir(), "harness"));
      const config = writeConfig(
        path.join(fixture.dir(), "configs", "all-arms.yaml"),
        `name: all-arms
tasks:
  file: ${DATA}
  ids: [${TASK_IDS.join(", ")}]
out: ../runs/all-arms
concurrency: 2
${evaluatorBlock}  judgeRepeats: 2
report:
  compare: [agent, single]
arms:
  - name: single
    kind: single-pass
    model: gpt-4o
    baseURL: ${fixture.server().baseURL}
  - name: agent
    kind: agent
    model: gpt-4o
    baseURL: ${fixture.server().baseURL}
    agent: { maxIterations: 1, replay: false }
  - name: reference
    kind: reference
  - name: blank
    kind: blank
  - name: frozen
    kind: mutant:no-script
  - name: assets
    kind: module:${path.resolve("agents/assets-baseline/index.ts")}
  - name: harness
    kind: results:${results}
    model: some-model
`,
      );
      const output: string[] = [];
      const code = await runIwrCapturing(output, ["run", config], { quiet: false });
      expect(code, output.join("\n")).toBe(0);
      const runDir = path.join(fixture.dir(), "runs", "all-arms");
      const report = readJson(path.join(runDir, "report.json"));
      const arms = ["single", "agent", "reference", "blank", "frozen", "assets", "harness"];
      expect(report.arms.map((arm: { name: string }) => arm.name)).toEqual(arms);
      expect(report.cells).toHaveLength(arms.length * TASK_IDS.length);

      // Every arm's mean Final is the mean of its eval.json files.
      const cellDirs = (arm: string) => {
        const armDir = path.join(runDir, "arms", arm, "repeat-0");
        return TASK_IDS.map((id) => {
          const [folder] = fs.readdirSync(path.join(armDir, String(id)));
          return path.join(armDir, String(id), folder!);
        });
      };
      for (const arm of arms) {
        const finals = cellDirs(arm).map((cellDir) => readJson(path.join(cellDir, "eval.json")).scores.final as number);
        const summary = report.arms.find((entry: { name: string }) => entry.name === arm);
        expect(summary.final, arm).toBeCloseTo(finals.reduce((a, b) => a + b, 0) / finals.length, 10);
        expect(summary.coverage, arm).toBe(1);
      }
      const finalOf = (arm: string) => report.arms.find((entry: { name: string }) => entry.name === arm).final as number;
      expect(finalOf("reference")).toBeGreaterThan(0.9);
      expect(finalOf("blank")).toBeLessThan(0.2);
      expect(finalOf("frozen")).toBeLessThan(finalOf("reference"));
      // The harness's pages are the true pages with their links from another folder: rebased, they score as the reference does.
      for (const cellDir of cellDirs("harness")) expect(readJson(path.join(cellDir, "source.json")).assetLinksRebased).toBeGreaterThan(0);
      expect(finalOf("harness")).toBeCloseTo(finalOf("reference"), 1);
      expect(readJson(path.join(results, String(first().id), "some-model", "eval.json"))).toEqual({ "the harness's own": true });
      // Model arms cost tokens; the paired comparison covers both tasks; the agent's drafts were scored by round.
      expect(report.arms.find((entry: { name: string }) => entry.name === "single").costUsd).toBeGreaterThan(0);
      expect(report.comparison).toMatchObject({ a: "agent", b: "single", tasks: 2 });
      expect(report.comparison.ci95[0]).toBeLessThanOrEqual(report.comparison.meanDifference);
      expect(report.comparison.ci95[1]).toBeGreaterThanOrEqual(report.comparison.meanDifference);
      const curve = report.curves.find((entry: { arm: string }) => entry.arm === "agent");
      expect(curve.rounds.map((round: { round: number }) => round.round)).toEqual([0, 1]);
      expect(curve.points.every((point: { final?: number }) => typeof point.final === "number")).toBe(true);
      // Each assertion was judged twice, both kept; the (deterministic) offline judge never disagreed with itself.
      const referenceEval = readJson(path.join(cellDirs("reference")[0]!, "eval.json"));
      expect(referenceEval.assertions.length).toBeGreaterThan(0);
      expect(
        referenceEval.assertions.every(
          (assertion: { repeats?: string[]; result: string }) => assertion.repeats?.length === 2 && assertion.repeats[0] === assertion.result,
        ),
      ).toBe(true);
      expect(report.judgeNoise.repeats).toBe(2);
      expect(report.judgeNoise.perArm.find((arm: { arm: string }) => arm.arm === "reference")).toMatchObject({ disagreeing: 0, finalSdFromJudge: 0 });
      // The reproducibility record.
      const record = readJson(path.join(runDir, "run.json"));
      expect(record.config.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(record.tools.chromium).not.toBe("unknown");
      expect(Object.keys(record.promptHashes)).toEqual(expect.arrayContaining(["generate", "analyze", "judge-assertion"]));

      // report.html: no console error, no request beyond the file itself (its thumbnails are data: URLs); one row
      // per task with each arm's Final and first failing step; the worst steps (the first failing step of the
      // lowest-scoring cell of each task, at most 8) with their images; and the line that points to iwr view.
      interface ReportCell {
        arm: string;
        repeat: number;
        taskId: number;
        final: number;
        failure?: { step: number | null };
      }
      const reportCells = report.cells as ReportCell[];
      const worst: ReportCell[] = [];
      for (const cell of reportCells
        .filter((entry) => entry.failure && entry.failure.step !== null)
        .sort((a, b) => a.final - b.final || a.taskId - b.taskId || a.arm.localeCompare(b.arm) || a.repeat - b.repeat)) {
        if (worst.length < 8 && !worst.some((chosen) => chosen.taskId === cell.taskId)) worst.push(cell);
      }
      // The blank arm fails a step of every task, so each task has a worst step here.
      expect(worst.map((cell) => cell.taskId).sort((a, b) => a - b)).toEqual(TASK_IDS);
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        const requests: string[] = [];
        page.on("console", (message) => void (message.type() === "error" && errors.push(message.text())));
        page.on("pageerror", (error) => void errors.push(error.message));
        page.on("request", (request) => void requests.push(request.url()));
        await page.goto(`file://${path.join(runDir, "report.html")}`);
        expect(errors).toEqual([]);
        expect(requests.filter((url) => !url.startsWith("data:"))).toEqual([`file://${path.join(runDir, "report.html")}`]);

        // Per task: a row for each task, a column for each arm with its Final (one repeat here: the cell's own).
        const taskRows = page.locator("tr[data-task-row]");
        expect(await taskRows.evaluateAll((rows) => rows.map((row) => Number(row.getAttribute("data-task-row"))))).toEqual(TASK_IDS);
        for (const id of TASK_IDS) {
          const texts = await page.locator(`tr[data-task-row="${id}"] td`).allInnerTexts();
          expect(texts, `task ${id}`).toHaveLength(3 + arms.length);
          arms.forEach((arm, column) => {
            const cell = reportCells.find((entry) => entry.taskId === id && entry.arm === arm && entry.repeat === 0)!;
            expect(texts[3 + column]!.startsWith((cell.final * 100).toFixed(1)), `task ${id} ${arm}: ${texts[3 + column]}`).toBe(true);
          });
        }

        // The worst steps: the chosen cells in order, each with the page's screenshot (and the checkpoint when the action has one), all decoded.
        const worstRows = page.locator("tr[data-worst-step]");
        expect(await worstRows.count()).toBe(worst.length);
        const worstTexts = await worstRows.allInnerTexts();
        worst.forEach((cell, row) => {
          expect(worstTexts[row], `worst step ${row}`).toContain(`task ${cell.taskId}\n${cell.arm} r${cell.repeat}`);
        });
        expect(await page.locator('tr[data-worst-step] img[alt^="page at step"]').count()).toBe(worst.length);
        const images = await page.locator("tr[data-worst-step] img").evaluateAll((nodes) => nodes.map((node) => (node as HTMLImageElement).naturalWidth));
        expect(images.length).toBeGreaterThanOrEqual(worst.length);
        expect(images.every((width) => width > 0)).toBe(true);
        expect(await page.locator("img").count()).toBe(images.length);

        // What the file leaves out, iwr view shows: the line names the command for this run folder.
        await expect(page.locator("[data-view-hint]").innerText()).resolves.toContain(viewCommand(runDir));
      } finally {
        await browser.close();
      }

      // A warm rerun: no model request, every cell skipped.
      fixture.server().requests.length = 0;
      const again: string[] = [];
      expect(await runIwrCapturing(again, ["run", config], { quiet: false })).toBe(0);
      expect(fixture.server().chatRequests()).toHaveLength(0);
      expect(again.join("\n")).toContain(`${arms.length * TASK_IDS.length} finished already`);
    },
    TEST_MS,
  );
});
