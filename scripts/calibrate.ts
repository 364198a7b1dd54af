/**
 * `npm run calibrate [-- --data tasks/iwr-mini.jsonl --result <dir> --workers 2 --ids 1,2]`
 *
 * For every task: the reference page (post-processed like a model answer) and a blank
 * page, each evaluated once with the offline judge and grounding and scored under both
 * pairing modes. Prints one table and checks the evaluator's calibration targets:
 *   reference: IFS 100 % on every task, mean Final ≥ 90 % (aligned);
 *   blank:     IFS 0 on every task, mean Final ≤ 15 %.
 * Where the reference loses a step, the reason (grounding, action, assertion evidence)
 * is printed. Exit code 1 when a target is missed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { configureLogger } from "../src/log/logger.ts";
import { loadTasks } from "../src/tasks/loader.ts";
import { calibrationProblems, calibrationTable, runCalibration } from "../src/run/calibration.ts";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      data: { type: "string", default: "tasks/iwr-mini.jsonl" },
      result: { type: "string" },
      workers: { type: "string", default: "2" },
      ids: { type: "string" },
    },
  });
  configureLogger({ level: "warn" });
  const dataPath = values.data ?? "tasks/iwr-mini.jsonl";
  if (!fs.existsSync(dataPath)) {
    console.error(`calibrate: ${dataPath} does not exist (record the bundled suite with npm run tasks:build, or pass --data)`);
    return 1;
  }
  const wanted = values.ids ? new Set(values.ids.split(",").map((id) => Number(id.trim()))) : undefined;
  const tasks = (await loadTasks(dataPath)).filter((task) => !wanted || wanted.has(task.id));
  const resultDir = values.result ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-calibration-"));
  const workers = Number(values.workers);
  console.log(`calibrating ${tasks.length} task(s) from ${dataPath} into ${resultDir} with ${workers} worker(s)`);

  const started = Date.now();
  const rows = await runCalibration({ tasks, resultDir, workers });
  console.log(`\n${calibrationTable(tasks, rows)}`);
  console.log(`\nwall time ${((Date.now() - started) / 1000).toFixed(1)} s (percentages; offline judge + grounding; visual metric ${rows[0]?.evaluation.records[0]?.record.settings.visualMetric ?? "?"})`);

  const problems = calibrationProblems(tasks, rows);
  if (problems.length > 0) {
    console.log(`\nCALIBRATION TARGETS MISSED:\n${problems.join("\n")}`);
    return 1;
  }
  console.log("\ncalibration targets met: reference IFS 100 % on every task, mean Final ≥ 90 % (aligned); blank IFS 0, mean Final ≤ 15 %");
  return 0;
}

process.exitCode = await main();
