/**
 * The fixed evaluator on one candidate folder, keyed by what it scores: skipped when its
 * eval.json already scored this very page, task and evaluator; otherwise scored, and a
 * failure recorded in eval-error.json beside it (the stale eval.json moved aside).
 */
import fs from "node:fs";
import { type ErrorRecord, errorMessage, toErrorRecord } from "../errors.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { moveAside } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import type { ProtocolProfile } from "../protocol.ts";
import { candidateDirFor, candidateFiles } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";
import { sameInputs } from "./eval-keys.ts";
import { verifyEvalRecord } from "./eval-record.ts";
import { type Evaluator, evaluateTask, evaluationInputs, type TaskEvaluation } from "./evaluate-task.ts";
import type { PairingMode } from "./settings.ts";

const logger = log("evaluate");

export interface TaskRunOutcome {
  taskId: number;
  /** `skipped`: a finished eval.json scored this very page, task and settings already. */
  status: "evaluated" | "skipped" | "failed";
  /** The page's folder. */
  candidateDir: string;
  /** Where its records are (eval.json, eval-error.json): the candidate's folder unless the caller named another. */
  recordDir: string;
  final?: number;
  ifs?: number;
  error?: ErrorRecord;
  wallMs: number;
}

/** Whether the finished eval.json scored exactly these inputs (false when it is absent or stale; a damaged one is moved aside, saying so). */
function unchangedRecord(file: string, current: Awaited<ReturnType<typeof evaluationInputs>>): boolean {
  const read = verifyEvalRecord(file);
  if (read.status === "corrupt") moveAside(file, read.reason, "the task is evaluated again");
  return read.status === "ok" && sameInputs(read.value.inputs, current);
}

/** A page generated under one profile and scored under the other is legitimate, but should not go unnoticed. */
function warnOnProtocolMix(generationFile: string, profile: ProtocolProfile, taskId: number): void {
  if (!fs.existsSync(generationFile)) return;
  try {
    const generated = (JSON.parse(fs.readFileSync(generationFile, "utf8")) as { protocol?: unknown }).protocol ?? "corrected";
    if (generated !== profile) logger.warn(`task ${taskId}: its page was generated under the ${String(generated)} protocol and is evaluated under ${profile}`);
  } catch {
    // An unreadable generation.json says nothing about the page's profile.
  }
}

/**
 * Evaluates one task's candidate unless its eval.json already scored this very page,
 * task and evaluator (then "skipped"). A changed or new page is scored again; when that
 * fails, the old eval.json no longer describes the page and moves to eval.stale.json, so
 * no report averages it, and the error goes to eval-error.json.
 */
export async function evaluateOneTask(
  task: Task,
  options: {
    resultDir: string;
    model: string;
    pairing: PairingMode | readonly PairingMode[];
    force?: boolean;
    candidateDir?: string;
    /** Where the records go (default: the candidate's folder); an agent's drafts are scored outside its work folder. */
    recordDir?: string;
    /** The page is built from the task's own (reference, blank, mutant): replayed seeded under either profile. */
    calibration?: boolean;
  },
  evaluator: Evaluator,
): Promise<{ outcome: TaskRunOutcome; evaluation?: TaskEvaluation }> {
  const started = Date.now();
  // An experiment's cells name their folder; otherwise it is the model's, as the benchmark lays it out.
  const candidateDir = options.candidateDir ?? candidateDirFor(options.resultDir, task.id, options.model);
  const recordDir = options.recordDir ?? candidateDir;
  const files = candidateFiles(recordDir);
  const modes = typeof options.pairing === "string" ? [options.pairing] : [...options.pairing];
  warnOnProtocolMix(candidateFiles(candidateDir).generation, evaluator.profile, task.id);
  try {
    const primaryMode = modes[0];
    if (
      !options.force &&
      primaryMode &&
      unchangedRecord(files.eval, await evaluationInputs(task, candidateDir, evaluator, primaryMode, options.calibration ?? false))
    ) {
      return { outcome: { taskId: task.id, status: "skipped", candidateDir, recordDir, wallMs: 0 } };
    }
    const evaluation = await evaluateTask({
      task,
      candidateDir,
      recordDir,
      model: options.model,
      pairingModes: modes,
      evaluator,
      replace: true,
      calibration: options.calibration ?? false,
    });
    fs.rmSync(files.evalError, { force: true });
    const scores = evaluation.records[0]?.record.scores;
    return {
      outcome: { taskId: task.id, status: "evaluated", candidateDir, recordDir, final: scores?.final, ifs: scores?.ifs, wallMs: Date.now() - started },
      evaluation,
    };
  } catch (error) {
    logger.error(`task ${task.id}: evaluation failed: ${errorMessage(error)}`);
    const record = toErrorRecord(error);
    if (fs.existsSync(files.eval)) fs.renameSync(files.eval, files.staleEval);
    // Recorded in the task's own folder; no eval.json is left, so a rerun tries the task again.
    writeFileAtomicSync(
      files.evalError,
      `${redactString(JSON.stringify({ taskId: task.id, model: options.model, failedAt: new Date().toISOString(), error: record }, null, 2))}\n`,
    );
    return { outcome: { taskId: task.id, status: "failed", candidateDir, recordDir, error: record, wallMs: Date.now() - started } };
  }
}
