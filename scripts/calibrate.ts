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
 *   reference: IFS 100 % and Final ≥ 90 % on every task (aligned);
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
import { positiveInteger, taskIdList } from "../src/cli/options.ts";
import { PROTOCOL_PROFILES, profileRules } from "../src/protocol.ts";
import { existingTaskFile, oneOf, parseScriptArgs } from "./cli-args.ts";

const { values: chosen } = parseScriptArgs({
  name: "calibrate",
  command: "npm run calibrate --",
  summary:
    "Evaluates every task's true page, a blank page and the mutant ladder of the true page with the offline judge and grounding, " +
    "scores each under both pairings (eval.json aligned, eval.official.json) and checks the evaluator's calibration targets. " +
    "Exit code 1 when a target is missed.",
  options: {
    data: { type: "string", value: "<tasks.jsonl>", description: "the task file", default: "tasks/iwr-mini.jsonl", parse: existingTaskFile },
    result: { type: "string", value: "<dir>", description: "where the candidate folders and eval.json files go (default: a new temporary folder)" },
    workers: { type: "string", value: "<n>", description: "pages evaluated at once", default: "2", parse: positiveInteger },
    ids: { type: "string", value: "<1,2>", description: "only these task ids (default: every task)", parse: (text: string) => new Set(taskIdList(text)) },
    "no-ladder": { type: "boolean", description: "leave out the mutant ladder: reference and blank pages only" },
    protocol: {
      type: "string",
      value: "<corrected|official>",
      description: "the protocol profile of the replay and scoring rules",
      default: "corrected",
      parse: oneOf(PROTOCOL_PROFILES),
    },
  },
});

// Loaded once the arguments are good, so that --help and a usage error answer at once
// rather than after the evaluator's modules (seconds on a small machine).
const [
  { configureLogger },
  { loadTasks },
  { mutantLadder },
  { calibrationProblems, calibrationTable, runCalibration },
  { analyseLadder },
  { readingStageTallies },
  { truthReadingTallies },
  { stageTalliesTable },
  { ocrCostTable },
] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/tasks/loader.ts"),
  import("../src/mutants/ladder.ts"),
  import("../src/calibration/calibration.ts"),
  import("../src/calibration/ladder.ts"),
  import("../src/evaluator/judge/candidate-reading.ts"),
  import("../src/evaluator/judge/truth-change.ts"),
  import("../src/evaluator/judge/stage-tallies.ts"),
  import("../src/metrics/ocr-cost.ts"),
]);

/** What each stage of the offline judge's reading of candidate screens found for what it asked (candidate-reading.ts). */
function readingStagesTable(): string {
  const { stages, unsettledLiterals } = readingStageTallies();
  return stageTalliesTable({
    heading: "the judge's reading of candidate screens, by stage",
    columns: [
      ["reached", "judgements reaching it"],
      ["readingsAsked", "readings asked"],
      ["literalsSettled", "literals settled"],
    ],
    tallies: stages,
    closingRows: [["unsettled after every stage", unsettledLiterals]],
  });
}

/** What each stage of the reading of the true page's screens found (truth-change.ts), and the fates only the enlarged reading decided. */
function truthStagesTable(): string {
  const { stages, fatesTheEnlargedReadingDecided } = truthReadingTallies();
  return stageTalliesTable({
    heading: "the judge's reading of the true page's screens, by stage",
    columns: [
      ["reached", "literal × screen looked for"],
      ["found", "found"],
    ],
    tallies: stages,
    closingRows: [["fates only the enlarged whole screen decided", fatesTheEnlargedReadingDecided]],
  });
}

async function main(): Promise<number> {
  const withLadder = !chosen["no-ladder"];
  configureLogger({ level: "warn" });
  const tasks = (await loadTasks(chosen.data, { resolutionFallback: profileRules(chosen.protocol).missingResolution })).filter(
    (task) => !chosen.ids || chosen.ids.has(task.id),
  );
  const resultDir = chosen.result ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-calibration-"));
  console.log(
    `calibrating ${tasks.length} task(s) from ${chosen.data} into ${resultDir} with ${chosen.workers} worker(s), ` +
      `protocol ${chosen.protocol}${withLadder ? ", with the mutant ladder" : ""}`,
  );

  const started = Date.now();
  const rows = await runCalibration({
    tasks,
    resultDir,
    workers: chosen.workers,
    profile: chosen.protocol,
    ...(withLadder ? { mutants: (task) => mutantLadder(task.truth.actions.length) } : {}),
  });
  console.log(`\n${calibrationTable(tasks, rows)}`);
  const ladder = withLadder ? analyseLadder(tasks, rows) : undefined;
  if (ladder) {
    console.log(`\n${ladder.table}`);
    // Every judged step of the ladder with the judge's verdict and the deserved one, for whoever looks into a disagreement.
    const stepsFile = path.join(resultDir, "ladder-steps.json");
    fs.writeFileSync(stepsFile, `${JSON.stringify(ladder.judged, null, 2)}\n`);
    console.log(`the ladder's ${ladder.judged.length} judged steps: ${stepsFile}`);
  }
  console.log(`\n${readingStagesTable()}`);
  console.log(`\n${truthStagesTable()}`);
  // What the stages above cost in OCR, beside what the OCR metric and anything else read.
  console.log(`\n${ocrCostTable()}`);
  console.log(
    `\nwall time ${((Date.now() - started) / 1000).toFixed(1)} s (percentages; offline judge + grounding; ` +
      `visual metric ${rows[0]?.evaluation.records[0]?.record.settings.visualMetric ?? "?"})`,
  );

  const problems = [...calibrationProblems(tasks, rows), ...(ladder?.problems ?? [])];
  if (problems.length > 0) {
    console.log(`\nCALIBRATION TARGETS MISSED:\n${problems.join("\n")}`);
    return 1;
  }
  const ladderNote = ladder
    ? `; judge agrees with the mutants' deserved verdicts on ${(ladder.agreement * 100).toFixed(2)} % of ${ladder.judged.length} steps, ` +
      `every mutant below the true page, freeze-after monotone`
    : "";
  console.log(`\ncalibration targets met: reference IFS 100 % and Final ≥ 90 % on every task (aligned); blank IFS 0, mean Final ≤ 15 %${ladderNote}`);
  return 0;
}

process.exitCode = await main();
