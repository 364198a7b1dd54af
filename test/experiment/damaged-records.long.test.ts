/**
 * Damaged records in a run folder (a truncated eval.json or cell.json, as a full disk or a
 * killed copy leaves them): `iwr report` counts such a cell as failed, naming the file and
 * the reason (never a row of zeros, never a dropped cell), and exits 1; `iwr run` moves the
 * damaged file aside (`.corrupt`), recomputes the cell, and its report is the undamaged one.
 * Calibration arms on two bundled tasks: real Chromium and OCR, no model.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, evaluatorBlock, experimentFixture, readJson, TEST_MS, writeConfig } from "../support/experiment.ts";
import { warningsInLog } from "../support/warnings.ts";

const fixture = experimentFixture("damaged-records");

interface ArmRow {
  name: string;
  tasks: number;
  cells: number;
  failed: number;
  final: number;
}

describe("damaged records in a run folder", () => {
  it(
    "a truncated eval.json, then a truncated cell.json: reported as failed cells with the file named, then recomputed by iwr run",
    async () => {
      const runDir = path.join(fixture.dir(), "run");
      const config = writeConfig(
        path.join(fixture.dir(), "damaged.yaml"),
        `tasks:\n  file: ${DATA}\n  ids: [1, 2]\nout: ${runDir}\n${evaluatorBlock}arms:\n  - name: reference\n    kind: reference\n`,
      );
      const logFile = path.join(fixture.dir(), "log.jsonl");
      const iwr = async (...args: string[]) => {
        const output: string[] = [];
        const code = await runIwrCapturing(output, ["--log-file", logFile, ...args]);
        vi.restoreAllMocks();
        return { code, output: output.join("\n") };
      };
      const arms = (): ArmRow[] => readJson(path.join(runDir, "report.json")).arms;
      const reference = () => arms().find((arm) => arm.name === "reference")!;
      expect((await iwr("run", config)).code).toBe(0);
      const whole = reference();
      expect(whole).toMatchObject({ tasks: 2, cells: 2, failed: 0 });
      expect(whole.final).toBeGreaterThan(0.5);

      const cellDir = path.join(runDir, "arms", "reference", "repeat-0", "1", "reference");
      const evalFile = path.join(cellDir, "eval.json");
      const cellFile = path.join(cellDir, "cell.json");
      const evalText = fs.readFileSync(evalFile, "utf8");

      // eval.json cut in half: the report fails the cell, naming the file; it does not score it 0 and say nothing.
      fs.writeFileSync(evalFile, evalText.slice(0, Math.floor(evalText.length / 2)));
      const reported = await iwr("report", runDir);
      expect(reported.code).toBe(1);
      expect(reference()).toMatchObject({ tasks: 2, cells: 2, failed: 1 });
      const damagedCell = readJson(path.join(runDir, "report.json")).cells.find(
        (cell: { arm: string; taskId: number }) => cell.arm === "reference" && cell.taskId === 1,
      );
      expect(damagedCell.status).toBe("failed");
      expect(damagedCell.damaged).toContain(evalFile);
      expect(damagedCell.damaged).toMatch(/not valid JSON/);
      expect((await warningsInLog(logFile)).some((message) => message.includes(evalFile) && message.includes("reported as failed"))).toBe(true);

      // iwr run does not trust cell.json alone: the damaged eval.json is moved aside and the cell scored again.
      const rerun = await iwr("run", config);
      expect(rerun.code).toBe(0);
      expect(fs.existsSync(`${evalFile}.corrupt`)).toBe(true);
      expect(fs.readFileSync(`${evalFile}.corrupt`, "utf8")).toBe(evalText.slice(0, Math.floor(evalText.length / 2)));
      expect(readJson(evalFile).scores.final).toBeCloseTo(JSON.parse(evalText).scores.final, 6);
      expect((await warningsInLog(logFile)).some((message) => message.includes(evalFile) && message.includes("moved aside"))).toBe(true);
      expect(reference()).toMatchObject({ tasks: 2, cells: 2, failed: 0 });
      expect(reference().final).toBeCloseTo(whole.final, 6);

      // cell.json cut short: the report keeps the cell, as failed, instead of dropping the task from the arm.
      const cellText = fs.readFileSync(cellFile, "utf8");
      fs.writeFileSync(cellFile, cellText.slice(0, 40));
      const reportedAgain = await iwr("report", runDir);
      expect(reportedAgain.code).toBe(1);
      expect(reportedAgain.output).toMatch(/1 cell\(s\) have a damaged or missing record/);
      expect(reference()).toMatchObject({ tasks: 2, cells: 2, failed: 1 });
      expect((await warningsInLog(logFile)).some((message) => message.includes(cellFile) && message.includes("reported as failed"))).toBe(true);

      // And iwr run moves it aside and runs the cell again: the report is the undamaged run's.
      expect((await iwr("run", config)).code).toBe(0);
      expect(fs.readFileSync(`${cellFile}.corrupt`, "utf8")).toBe(cellText.slice(0, 40));
      expect(readJson(cellFile).status).toBe("finished");
      expect(reference()).toMatchObject({ tasks: 2, cells: 2, failed: 0 });
      expect(reference().final).toBeCloseTo(whole.final, 6);
    },
    TEST_MS,
  );
});
