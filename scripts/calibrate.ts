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
import pLimit from "p-limit";
import { configureLogger } from "../src/log/logger.ts";
import { loadTasks } from "../src/tasks/loader.ts";
import type { Task } from "../src/tasks/schema.ts";
import type { PairingMode } from "../src/evaluator/settings.ts";
import { evaluateTask, type TaskEvaluation } from "../src/evaluator/evaluate-task.ts";
import { closeEvaluator, createEvaluator } from "../src/run/evaluate.ts";
import { CALIBRATION_CANDIDATES, writeCalibrationCandidate, type CalibrationCandidate } from "../src/run/calibration.ts";

const MODES: readonly PairingMode[] = ["aligned", "official"];
const TARGETS = { referenceFinalMin: 0.9, blankFinalMax: 0.15 };

interface Row {
  task: Task;
  candidate: CalibrationCandidate;
  evaluation: TaskEvaluation;
}

function pct(value: number): string {
  return `${(value * 100).toFixed(2)}`.padStart(6);
}

function scoresOf(row: Row | undefined, mode: PairingMode) {
  return row?.evaluation.records.find((entry) => entry.mode === mode)?.record.scores;
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** Why the reference lost steps: the failed action, and each assertion the judge said No to. */
function explain(row: Row): string[] {
  const lines: string[] = [];
  const replay = row.evaluation.replay;
  if (replay.stopReason) lines.push(`  stopped: ${replay.stopReason.message}`);
  for (const outcome of replay.assertions) {
    if (outcome.verdict.result === "Yes") continue;
    lines.push(`  action ${outcome.actionIndex} assertion "${outcome.assertion}": No — ${outcome.verdict.think ?? outcome.verdict.failure?.message ?? ""}`);
    const ocr = outcome.verdict.evidence?.ocrText;
    if (ocr) lines.push(`    OCR read: ${ocr.slice(0, 300)}`);
  }
  return lines;
}

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
  const evaluator = await createEvaluator({ judge: "heuristic", grounding: "heuristic" });
  const limit = pLimit(workers);
  const rows: Row[] = [];
  try {
    await Promise.all(
      tasks.flatMap((task) =>
        CALIBRATION_CANDIDATES.map((candidate) =>
          limit(async () => {
            const candidateDir = writeCalibrationCandidate(task, resultDir, candidate);
            const evaluation = await evaluateTask({ task, candidateDir, model: candidate, pairingModes: MODES, evaluator, replace: true });
            rows.push({ task, candidate, evaluation });
          }),
        ),
      ),
    );
  } finally {
    await closeEvaluator();
  }

  const find = (task: Task, candidate: CalibrationCandidate) => rows.find((row) => row.task.id === task.id && row.candidate === candidate);
  console.log("");
  console.log("| task | site | steps | ref IFS | ref Final aligned | ref Final official | blank IFS | blank Final aligned | blank Final official |");
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const task of tasks) {
    const reference = find(task, "reference");
    const blank = find(task, "blank");
    console.log(
      `| ${task.id} | ${task.meta.sourceWebsite} | ${task.truth.actions.length} | ${pct(scoresOf(reference, "aligned")?.ifs ?? 0)} | ${pct(scoresOf(reference, "aligned")?.final ?? 0)} | ${pct(scoresOf(reference, "official")?.final ?? 0)} | ${pct(scoresOf(blank, "aligned")?.ifs ?? 0)} | ${pct(scoresOf(blank, "aligned")?.final ?? 0)} | ${pct(scoresOf(blank, "official")?.final ?? 0)} |`,
    );
  }
  const column = (candidate: CalibrationCandidate, mode: PairingMode, key: "ifs" | "final" | "vfs") =>
    mean(tasks.map((task) => scoresOf(find(task, candidate), mode)?.[key] ?? 0));
  console.log(
    `| mean | | | ${pct(column("reference", "aligned", "ifs"))} | ${pct(column("reference", "aligned", "final"))} | ${pct(column("reference", "official", "final"))} | ${pct(column("blank", "aligned", "ifs"))} | ${pct(column("blank", "aligned", "final"))} | ${pct(column("blank", "official", "final"))} |`,
  );
  console.log(`\nwall time ${((Date.now() - started) / 1000).toFixed(1)} s (percentages; offline judge + grounding; visual metric ${rows[0]?.evaluation.records[0]?.record.settings.visualMetric ?? "?"})`);

  const problems: string[] = [];
  for (const task of tasks) {
    const reference = find(task, "reference");
    if ((scoresOf(reference, "aligned")?.ifs ?? 0) < 1) {
      problems.push(`reference of task ${task.id} reached IFS ${pct(scoresOf(reference, "aligned")?.ifs ?? 0).trim()} %:`);
      if (reference) problems.push(...explain(reference));
    }
    if ((scoresOf(find(task, "blank"), "aligned")?.ifs ?? 1) > 0) problems.push(`blank page of task ${task.id} reached IFS > 0`);
  }
  if (column("reference", "aligned", "final") < TARGETS.referenceFinalMin) problems.push(`reference mean Final (aligned) below ${TARGETS.referenceFinalMin * 100} %`);
  if (column("blank", "aligned", "final") > TARGETS.blankFinalMax) problems.push(`blank mean Final (aligned) above ${TARGETS.blankFinalMax * 100} %`);
  if (problems.length > 0) {
    console.log(`\nCALIBRATION TARGETS MISSED:\n${problems.join("\n")}`);
    return 1;
  }
  console.log("\ncalibration targets met: reference IFS 100 % on every task, mean Final ≥ 90 % (aligned); blank IFS 0, mean Final ≤ 15 %");
  return 0;
}

process.exitCode = await main();
