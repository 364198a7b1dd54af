/**
 * `npm run calibrate [-- --data tasks/iwr-mini.jsonl --result <dir> --workers 2 --ids 1,2 --no-ladder --protocol corrected|official]`
 *
 * For every task: the true page (post-processed like a model answer), a blank page and
 * the mutant ladder of the true page (src/mutants: freeze-after at 0, n/3, 2n/3 gestures,
 * no-script, lively-wrong, wrong-state, text:0.3, no-images, layout-shift, restyle), each
 * evaluated once with the offline judge and grounding, under one protocol profile
 * (default corrected; `--protocol official` for the harness's replay rules) and scored
 * under both pairing modes (eval.json aligned, eval.official.json). Prints the tables and checks the
 * evaluator's calibration targets:
 *   reference: IFS 100 % on every task, mean Final ≥ 90 % (aligned);
 *   blank:     IFS 0 on every task, mean Final ≤ 15 %;
 *   ladder:    the judge agrees with the DOM oracle's deserved verdicts on ≥ 90 % of the
 *              mutants' judged steps; every mutant below the true page on every task;
 *              freeze-after:k monotone in k.
 * Where a target is missed, the reason is printed. Exit code 1 when a target is missed,
 * 2 for a usage error.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { configureLogger } from "../src/log/logger.ts";
import { loadTasks } from "../src/tasks/loader.ts";
import { mutantLadder } from "../src/mutants/ladder.ts";
import { calibrationProblems, calibrationTable, runCalibration } from "../src/run/calibration.ts";
import { analyseLadder } from "../src/run/calibration-ladder.ts";
import { PROTOCOL_PROFILES, profileRules, type ProtocolProfile } from "../src/protocol.ts";

const USAGE = "usage: npm run calibrate [-- --data <tasks.jsonl>] [--result <dir>] [--workers <n>] [--ids 1,2] [--no-ladder] [--protocol corrected|official]";

function options(): { data: string; result?: string; workers: number; ids?: Set<number>; ladder: boolean; protocol: ProtocolProfile } | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        data: { type: "string", default: "tasks/iwr-mini.jsonl" },
        result: { type: "string" },
        workers: { type: "string", default: "2" },
        ids: { type: "string" },
        "no-ladder": { type: "boolean", default: false },
        protocol: { type: "string", default: "corrected" },
        help: { type: "boolean", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(`calibrate: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exitCode = 2;
    return undefined;
  }
  if (values.help) {
    console.log(USAGE);
    return undefined;
  }
  const workers = Number(values.workers);
  const ids = values.ids?.split(",").map((id) => id.trim()).filter(Boolean);
  const protocol = values.protocol;
  if (!PROTOCOL_PROFILES.some((profile) => profile === protocol)) {
    console.error(`calibrate: --protocol takes ${PROTOCOL_PROFILES.join(" or ")}, got '${protocol}'\n${USAGE}`);
    process.exitCode = 2;
    return undefined;
  }
  if (!Number.isInteger(workers) || workers < 1 || ids?.some((id) => !/^\d+$/.test(id))) {
    console.error(`calibrate: --workers takes a positive integer and --ids task ids like 1,2\n${USAGE}`);
    process.exitCode = 2;
    return undefined;
  }
  return {
    data: values.data ?? "tasks/iwr-mini.jsonl",
    ...(values.result ? { result: values.result } : {}),
    workers,
    ...(ids ? { ids: new Set(ids.map(Number)) } : {}),
    ladder: !values["no-ladder"],
    protocol: protocol as ProtocolProfile,
  };
}

async function main(): Promise<number | undefined> {
  const chosen = options();
  if (!chosen) return process.exitCode === undefined ? 0 : undefined;
  configureLogger({ level: "warn" });
  if (!fs.existsSync(chosen.data)) {
    console.error(`calibrate: ${chosen.data} does not exist (record the bundled suite with npm run tasks:build, or pass --data)`);
    return 1;
  }
  const tasks = (await loadTasks(chosen.data, { resolutionFallback: profileRules(chosen.protocol).missingResolution })).filter((task) => !chosen.ids || chosen.ids.has(task.id));
  const resultDir = chosen.result ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-calibration-"));
  console.log(`calibrating ${tasks.length} task(s) from ${chosen.data} into ${resultDir} with ${chosen.workers} worker(s), protocol ${chosen.protocol}${chosen.ladder ? ", with the mutant ladder" : ""}`);

  const started = Date.now();
  const rows = await runCalibration({ tasks, resultDir, workers: chosen.workers, profile: chosen.protocol, ...(chosen.ladder ? { mutants: (task) => mutantLadder(task.truth.actions.length) } : {}) });
  console.log(`\n${calibrationTable(tasks, rows)}`);
  const ladder = chosen.ladder ? analyseLadder(tasks, rows) : undefined;
  if (ladder) console.log(`\n${ladder.table}`);
  console.log(`\nwall time ${((Date.now() - started) / 1000).toFixed(1)} s (percentages; offline judge + grounding; visual metric ${rows[0]?.evaluation.records[0]?.record.settings.visualMetric ?? "?"})`);

  const problems = [...calibrationProblems(tasks, rows), ...(ladder?.problems ?? [])];
  if (problems.length > 0) {
    console.log(`\nCALIBRATION TARGETS MISSED:\n${problems.join("\n")}`);
    return 1;
  }
  console.log(`\ncalibration targets met: reference IFS 100 % on every task, mean Final ≥ 90 % (aligned); blank IFS 0, mean Final ≤ 15 %${ladder ? `; judge agrees with the mutants' deserved verdicts on ${(ladder.agreement * 100).toFixed(2)} % of ${ladder.judged.length} steps, every mutant below the true page, freeze-after monotone` : ""}`);
  return 0;
}

const code = await main();
if (code !== undefined) process.exitCode = code;
