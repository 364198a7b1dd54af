/**
 * `npm run bench:selfcheck [-- --ids 3,10 --workers 2 --result <dir>]`: how well the
 * self-check tracks the evaluator. For each task: its true page, the blank page and the
 * mutant ladder (src/mutants/ladder.ts), scored by the evaluator (offline judge and
 * grounding, aligned pairing) and by the self-check (the task's own action descriptions
 * as a labelled "given" trajectory, heuristic grounding; never the truth).
 *
 * Prints per task Spearman ρ(self-score, evaluator Final) and the share of page pairs
 * both order the same way (src/selfcheck/tracking.ts), their means over the tasks, and
 * the self-check's time against the evaluator's on the same page in the same run (median
 * of the per-page ratios). Both run with the same number of workers, pipelined: up to two
 * pages per page slot are in flight, so a page may first wait for a slot while other
 * pages replay. That wait is the bench's queue, not the page's cost, and how long it is
 * depends on the phase's mix (an evaluation's judging overlaps the next replay; a
 * self-check has little to overlap). So the time ratio is printed three ways: the page's
 * own time (wall less its slot wait, both sides; the figure the target is judged by), the
 * raw wall times, and the two phases' totals.
 * Targets: mean ρ ≥ 0.85, mean pairwise agreement ≥ 0.85, time ratio ≤ 0.8.
 *
 * `--reuse` takes the evaluations already in `--result` (eval.json, replay.json of an
 * earlier run of this bench) and runs only the self-checks: ρ and agreement are then as
 * good as a full run's, the time ratio is against that earlier run's evaluator times.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { existingTaskFile, exitWithUsageError, parseScriptArgs } from "../scripts/cli-args.ts";
import type { CalibrationRow } from "../src/calibration/calibration.ts";
import { positiveInteger, taskIdList } from "../src/cli/options.ts";
import { candidateFiles } from "../src/results/layout.ts";
import type { ScoredPage } from "../src/selfcheck/tracking.ts";
import type { Task } from "../src/tasks/schema.ts";

const spec = {
  name: "bench:selfcheck",
  command: "npm run bench:selfcheck --",
  summary:
    "How well the self-check tracks the evaluator: per task, each page of the mutant ladder (plus the true and the blank page) scored by " +
    "both; prints Spearman rho, pairwise agreement and self-check / evaluator time (targets >= 0.85, >= 0.85, <= 0.8). ~50 min.",
  options: {
    data: { type: "string", value: "<tasks.jsonl>", description: "the task file", default: "tasks/iwr-mini.jsonl", parse: existingTaskFile },
    ids: { type: "string", value: "<3,10>", description: "only these task ids (default: every task)", parse: (text: string) => taskIdList(text) },
    workers: { type: "string", value: "<n>", description: "pages evaluated and self-checked at once", default: "2", parse: positiveInteger },
    result: { type: "string", value: "<dir>", description: "where the pages and records go, kept (default: a temporary folder, removed at the end)" },
    reuse: { type: "boolean", description: "take the evaluations an earlier run left in --result and run only the self-checks" },
  },
} as const;
const { values } = parseScriptArgs(spec);
if (values.reuse && !values.result) exitWithUsageError(spec, "--reuse needs --result <dir> of an earlier run");

// Loaded once the arguments are good, so that --help and a usage error answer at once
// rather than after the browser's, OCR's and the evaluator's modules.
const [
  { defaultPageMemoryLimitMiB },
  { closeSharedBrowser },
  { createVisualMetric },
  { ocrPoolSizeFor, setOcrPoolSize, shutdownOcr },
  { configureLogger },
  { mutantLadder },
  { replayActionOf },
  { runCalibration },
  { createPageSlots, runPipelined },
  { runSelfCheck },
  { trackingOf },
  { loadTasks },
] = await Promise.all([
  import("../src/browser/host.ts"),
  import("../src/browser/launch.ts"),
  import("../src/metrics/visual.ts"),
  import("../src/metrics/ocr.ts"),
  import("../src/log/logger.ts"),
  import("../src/mutants/ladder.ts"),
  import("../src/replay/replay.ts"),
  import("../src/calibration/calibration.ts"),
  import("../src/evaluator/task-pipeline.ts"),
  import("../src/selfcheck/self-check.ts"),
  import("../src/selfcheck/tracking.ts"),
  import("../src/tasks/loader.ts"),
]);

const TARGETS = { spearman: 0.85, pairwise: 0.85, timeRatio: 0.8 };

/** A page the evaluator scored: its Final (aligned pairing) and the evaluation's wall time. */
interface EvaluatedPage {
  task: Task;
  candidate: string;
  candidateDir: string;
  final: number;
  evaluatorMs: number;
  /** Of evaluatorMs, the wait for a page slot. */
  evaluatorSlotWaitMs: number;
}

interface PageResult extends EvaluatedPage {
  selfScore: number;
  selfCheckMs: number;
  /** Of selfCheckMs, the wait for a page slot. */
  selfCheckSlotWaitMs: number;
}

const ownTimeRatio = (page: PageResult) => (page.selfCheckMs - page.selfCheckSlotWaitMs) / (page.evaluatorMs - page.evaluatorSlotWaitMs);
const wallTimeRatio = (page: PageResult) => page.selfCheckMs / page.evaluatorMs;

function evaluatedPageOf(row: CalibrationRow): EvaluatedPage {
  const aligned = row.evaluation.records.find((entry) => entry.mode === "aligned")!.record;
  const { wallMs, timings } = row.evaluation.replay;
  return {
    task: row.task,
    candidate: row.candidate,
    candidateDir: row.candidateDir,
    final: aligned.scores.final,
    evaluatorMs: wallMs,
    evaluatorSlotWaitMs: timings.slotWaitMs,
  };
}

/** The pages an earlier run left in `resultDir`: every candidate folder with eval.json and replay.json. */
function evaluatedPagesIn(resultDir: string, tasks: readonly Task[]): EvaluatedPage[] {
  const pages: EvaluatedPage[] = [];
  for (const task of tasks) {
    const taskDir = path.join(resultDir, String(task.id));
    if (!fs.existsSync(taskDir)) continue;
    for (const folder of fs.readdirSync(taskDir).sort()) {
      const files = candidateFiles(path.join(taskDir, folder));
      if (!fs.existsSync(files.eval) || !fs.existsSync(files.replay)) continue;
      const final = JSON.parse(fs.readFileSync(files.eval, "utf8")).scores.final as number;
      const replay = JSON.parse(fs.readFileSync(files.replay, "utf8")) as { wallMs: number; timings?: { slotWaitMs?: number } };
      pages.push({
        task,
        candidate: folder.replace(/^mutant-/, ""),
        candidateDir: files.dir,
        final,
        evaluatorMs: replay.wallMs,
        evaluatorSlotWaitMs: replay.timings?.slotWaitMs ?? 0,
      });
    }
  }
  return pages;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length === 0 ? Number.NaN : sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const mean = (values: readonly number[]) => {
  const defined = values.filter((value) => Number.isFinite(value));
  return defined.length === 0 ? Number.NaN : defined.reduce((sum, value) => sum + value, 0) / defined.length;
};
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");

async function main(): Promise<void> {
  configureLogger({ level: "warn" });
  const { workers, ids } = values;
  const resultDir = values.result ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-selfcheck-"));
  let tasks = await loadTasks(values.data);
  if (ids) tasks = tasks.filter((task) => ids.includes(task.id));
  console.log(`bench:selfcheck — ${tasks.length} task(s), reference + blank + mutant ladder each, ${workers} worker(s); results in ${resultDir}`);

  const started = Date.now();
  const pages = values.reuse
    ? evaluatedPagesIn(resultDir, tasks)
    : (await runCalibration({ tasks, resultDir, workers, mutants: (task) => mutantLadder(task.truth.actions.length), pairingModes: ["aligned"] })).map(
        evaluatedPageOf,
      );
  const evaluatedAt = Date.now();
  console.log(
    values.reuse
      ? `evaluator: ${pages.length} page(s) from ${resultDir} (an earlier run's times)`
      : `evaluator: ${pages.length} page(s) in ${((evaluatedAt - started) / 1000).toFixed(0)} s`,
  );

  setOcrPoolSize(ocrPoolSizeFor(workers));
  const metric = await createVisualMetric();
  const pageSlots = createPageSlots(workers);
  let results: PageResult[];
  const failures: string[] = [];
  try {
    const outcomes = await runPipelined(
      pages,
      { workers, weight: (page) => page.task.truth.actions.length },
      async (page): Promise<PageResult | { page: EvaluatedPage; error: string }> => {
        try {
          const record = await runSelfCheck({
            inputs: page.task.inputs,
            // The labelled "given" ablation: the line's action descriptions, never assertions or checkpoints.
            actions: page.task.line.action_sequence.map(replayActionOf),
            trajectory: "given",
            candidateDir: page.candidateDir,
            metric,
            pageSlots,
            memoryLimitMiB: defaultPageMemoryLimitMiB(workers),
          });
          return { ...page, selfScore: record.selfScore, selfCheckMs: record.timings.totalMs, selfCheckSlotWaitMs: record.timings.slotWaitMs };
        } catch (error) {
          // A page the self-check could not open is reported and left out of the figures, not the end of the bench.
          return { page, error: error instanceof Error ? error.message : String(error) };
        }
      },
    );
    results = outcomes.filter((outcome): outcome is PageResult => !("error" in outcome));
    for (const outcome of outcomes) if ("error" in outcome) failures.push(`task ${outcome.page.task.id} ${outcome.page.candidate}: ${outcome.error}`);
  } finally {
    await closeSharedBrowser();
    await shutdownOcr();
  }
  const selfCheckPhaseMs = Date.now() - evaluatedAt;
  console.log(
    `self-check: ${results.length} page(s) in ${(selfCheckPhaseMs / 1000).toFixed(0)} s; visual metric ${metric.info.name}` +
      `${metric.info.dino.status === "available" ? "" : " (DINO unavailable: labelled fallback)"}\n`,
  );

  console.log("| task | pages | Spearman ρ | pairwise agreement | pairs | median self-check / evaluator time, own (wall) |");
  console.log("|---:|---:|---:|---:|---:|---:|");
  const perTask = tasks.map((task) => {
    const pages = results.filter((result) => result.task.id === task.id);
    const tracking = trackingOf(pages.map((page): ScoredPage => ({ label: page.candidate, evaluator: page.final, signal: page.selfScore })));
    const own = median(pages.map(ownTimeRatio));
    const wall = median(pages.map(wallTimeRatio));
    console.log(
      `| ${task.id} | ${tracking.pages} | ${tracking.spearman.toFixed(3)} | ${tracking.pairwiseAgreement.toFixed(3)} | ` +
        `${tracking.pairs} | ${own.toFixed(2)} (${wall.toFixed(2)}) |`,
    );
    return tracking;
  });
  const allRatios = results.map(ownTimeRatio);
  const wallRatio = median(results.map(wallTimeRatio));
  const meanRho = mean(perTask.map((tracking) => tracking.spearman));
  const meanPairwise = mean(perTask.map((tracking) => tracking.pairwiseAgreement));
  const timeRatio = median(allRatios);
  console.log(`| mean | ${results.length} | ${meanRho.toFixed(3)} | ${meanPairwise.toFixed(3)} | | ${timeRatio.toFixed(2)} (${wallRatio.toFixed(2)}) |\n`);

  console.log("| task | page | evaluator Final | self-score | evaluator ms (slot wait) | self-check ms (slot wait) |");
  console.log("|---:|---|---:|---:|---:|---:|");
  for (const page of [...results].sort((a, b) => a.task.id - b.task.id || b.final - a.final)) {
    console.log(
      `| ${page.task.id} | ${page.candidate} | ${page.final.toFixed(3)} | ${page.selfScore.toFixed(3)} | ` +
        `${page.evaluatorMs} (${page.evaluatorSlotWaitMs}) | ${page.selfCheckMs} (${page.selfCheckSlotWaitMs}) |`,
    );
  }
  if (failures.length > 0)
    console.log(`\n${failures.length} page(s) could not be self-checked and are left out:\n${failures.map((line) => `  ${line}`).join("\n")}`);
  console.log(`\nmean Spearman ρ ${meanRho.toFixed(3)} (target ≥ ${TARGETS.spearman}: ${verdict(meanRho >= TARGETS.spearman)})`);
  console.log(`mean pairwise agreement ${meanPairwise.toFixed(3)} (target ≥ ${TARGETS.pairwise}: ${verdict(meanPairwise >= TARGETS.pairwise)})`);
  console.log(
    `self-check time / evaluator time, median over pages, each page's own time (wall less its slot wait) ${timeRatio.toFixed(2)} ` +
      `(target ≤ ${TARGETS.timeRatio}: ${verdict(timeRatio <= TARGETS.timeRatio)})`,
  );
  console.log(
    `  the same with raw wall times ${wallRatio.toFixed(2)}` +
      `${values.reuse ? "" : `; the phases' totals ${(selfCheckPhaseMs / (evaluatedAt - started)).toFixed(2)}`}`,
  );
  if (!values.result) fs.rmSync(resultDir, { recursive: true, force: true });
}

await main();
