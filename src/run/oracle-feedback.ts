/**
 * Oracle feedback: the fixed evaluator's verdict on each of the agent's drafts, in the shape
 * of the agent's feedback (agents/reconstruct/feedback.ts: score, findings, pairs) — the
 * task's truth, by design. It bounds what refinement can gain (the agent is told exactly
 * which step failed and why), and is a separate, labelled track: only the agent runner
 * (src/run/agent.ts) wires it in, and only when asked (`iwr agent --feedback oracle`, an
 * arm's `agent: { feedback: oracle }`); the normal agent never sees it, and no other module
 * may import this one (.dependency-cruiser.cjs).
 *
 * For a draft it runs the evaluator as an experiment would score the page (the same
 * settings), its records going to `<agent folder>/oracle-scores/<draft>/`, outside the
 * agent's work folder, and answers with:
 *
 * - score: the draft's Final (behaviour: IFS; appearance: VFS);
 * - findings: every step that failed (an action the replay could not do, a check the judge
 *   answered No), with the judge's reason, and every checkpoint whose screen differs from
 *   the reference, each costed by what fixing it would win back in Final at most: a failed
 *   step i of n costs IFS's weight × (n − i) / n (every later step waits on it), a
 *   checkpoint VFS's weight × its shortfall / the checkpoints scored;
 * - pairs: (reference checkpoint, the draft's screenshot it was compared with), failed
 *   steps first, then the checkpoints that match worst.
 */
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";
import { type EvalRecord, readEvalRecord } from "../evaluator/eval-record.ts";
import { evaluateOneTask } from "../evaluator/evaluate-candidate.ts";
import type { Evaluator } from "../evaluator/evaluate-task.ts";
import type { PairingMode } from "../evaluator/settings.ts";
import { PROTOCOL } from "../protocol.ts";
import { candidateFiles } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";

/** Findings worth less than this share of Final are left out: a rounding of the metrics, not a defect to chase. */
const MIN_FINDING_COST = 0.001;

/** A finding, as the agent's feedback has them (FeedbackFinding): the costliest are shown first. */
interface OracleFinding {
  kind: string;
  cost: number;
  message: string;
  step?: number;
}

/** What the evaluator says of a draft, in the agent's feedback's shape (DraftFeedback). */
export interface OracleVerdict {
  score: number;
  behaviour: number;
  appearance: number;
  findings: OracleFinding[];
  pairs: Array<{ reference: string; screenshot: string; caption: string }>;
}

export interface OracleFeedbackOptions {
  task: Task;
  /** The fixed evaluator, as the run scores pages (opened on first use). */
  evaluator: () => Promise<Evaluator>;
  pairing: PairingMode;
  /** Where a draft's records go, from the draft's folder (outside the agent's work folder). */
  recordDirOf: (draftDir: string) => string;
  /** The name recorded in the drafts' eval.json. */
  model: string;
}

const quoted = (text: string) => JSON.stringify(text.length > 160 ? `${text.slice(0, 157)}...` : text);

/** One pair of the visual list (scored or cut), with its files. */
interface ListEntry {
  actionIndex: number | null;
  evalpoint: number;
  checkpointPath: string;
  evalpointPath: string;
  visual?: number;
}

function listEntries(record: EvalRecord, task: Task, recordDir: string): ListEntry[] {
  const { lfsInVfs, hfsInVfs } = PROTOCOL.weights;
  const scored = record.steps.map((step) => ({
    actionIndex: step.actionIndex,
    evalpoint: step.evalpoint,
    checkpointPath: path.resolve(step.checkpointPath),
    evalpointPath: path.resolve(step.evalpointPath),
    visual: lfsInVfs * ((step.ocr + step.dino) / 2) + hfsInVfs * (step.mllm / 100),
  }));
  const cut = record.truncated.flatMap((entry) => {
    const checkpoint = task.truth.checkpointPaths[entry.position];
    return checkpoint === undefined
      ? []
      : [
          {
            actionIndex: entry.actionIndex,
            evalpoint: entry.evalpoint,
            checkpointPath: path.resolve(checkpoint),
            evalpointPath: path.resolve(candidateFiles(recordDir).evalpoint(entry.evalpoint)),
          },
        ];
  });
  return [...scored, ...cut];
}

function actionText(task: Task, index: number): string {
  const action = task.truth.actions[index];
  return action ? `action ${index + 1} (${action.type} ${quoted(action.parameters.description)})` : `action ${index + 1}`;
}

/** The evaluator's record of a draft as the agent's feedback. */
export function verdictFromRecord(record: EvalRecord, task: Task, recordDir: string): OracleVerdict {
  const { ifs: ifsWeight, vfs: vfsWeight } = PROTOCOL.weights;
  const steps = Math.max(1, record.totalSteps);
  const stepCost = (index: number) => (ifsWeight * (record.totalSteps - index)) / steps;
  const findings: OracleFinding[] = [];
  const failedSteps: number[] = [];

  const stop = record.stopReason;
  const stoppedAt = typeof stop?.details?.actionIndex === "number" ? stop.details.actionIndex : undefined;
  if (stop && stoppedAt !== undefined) {
    failedSteps.push(stoppedAt);
    findings.push({
      kind: "action-failed",
      step: stoppedAt,
      cost: stepCost(stoppedAt),
      message: `the evaluator's replay could not do ${actionText(task, stoppedAt)} on the page (${stop.message}); no later action was tried`,
    });
  } else if (stop) {
    findings.push({ kind: "page-failed", cost: ifsWeight, message: `the page could not be replayed: ${stop.message}` });
  }
  for (const assertion of record.assertions) {
    // "Error" (official profile): the judge gave no answer; it costs the page nothing.
    if (assertion.result !== "No") continue;
    failedSteps.push(assertion.actionIndex);
    const reason = assertion.think?.trim() ? `; the judge's reason: ${quoted(assertion.think.trim())}` : "";
    findings.push({
      kind: "check-failed",
      step: assertion.actionIndex,
      cost: stepCost(assertion.actionIndex),
      message: `after ${actionText(task, assertion.actionIndex)}, the check ${quoted(assertion.assertion)} was judged No${reason}`,
    });
  }
  const entries = listEntries(record, task, recordDir);
  const scored = entries.filter((entry) => entry.visual !== undefined);
  const metric = record.settings.visualMetric;
  for (const [index, step] of record.steps.entries()) {
    const visual = scored[index]?.visual ?? 1;
    const cost = (vfsWeight * (1 - visual)) / Math.max(1, record.steps.length);
    if (cost < MIN_FINDING_COST) continue;
    const when = step.evalpoint === 0 ? "before any action" : `after ${actionText(task, step.evalpoint - 1)}`;
    const judge = record.settings.mllmJudgeKind === "model" && step.judgeReply.trim() ? `; the visual judge said: ${quoted(step.judgeReply.trim())}` : "";
    findings.push({
      kind: "screen-differs",
      ...(step.actionIndex !== null ? { step: step.actionIndex } : {}),
      cost,
      message:
        `the screen ${when} differs from reference checkpoint step_${step.position}: text similarity ${step.ocr.toFixed(2)}, ` +
        `${metric} ${step.dino.toFixed(2)}, visual judge ${step.mllm}/100${judge}`,
    });
  }
  findings.sort((a, b) => b.cost - a.cost);

  const pairs: OracleVerdict["pairs"] = [];
  const seen = new Set<string>();
  const addPair = (entry: ListEntry | undefined, caption: string) => {
    if (!entry || seen.has(entry.evalpointPath) || !fs.existsSync(entry.evalpointPath) || !fs.existsSync(entry.checkpointPath)) return;
    seen.add(entry.evalpointPath);
    pairs.push({ reference: entry.checkpointPath, screenshot: entry.evalpointPath, caption });
  };
  for (const step of [...new Set(failedSteps)].sort((a, b) => a - b)) {
    addPair(
      entries.find((entry) => entry.actionIndex === step),
      `${actionText(task, step)} failed: the reference checkpoint beside the draft's screen it was compared with`,
    );
  }
  for (const entry of [...scored].sort((a, b) => (a.visual ?? 1) - (b.visual ?? 1))) {
    if ((entry.visual ?? 1) >= 1) continue;
    addPair(entry, `visual score ${(entry.visual ?? 1).toFixed(2)}: the reference checkpoint beside the draft's screen after ${entry.evalpoint} action(s)`);
  }
  return { score: record.scores.final, behaviour: record.scores.ifs, appearance: record.scores.vfs, findings, pairs };
}

/** The oracle of one task: a draft's folder in, the evaluator's verdict on its page out. */
export function oracleFeedback(options: OracleFeedbackOptions): (draftDir: string) => Promise<OracleVerdict> {
  return async (draftDir) => {
    const recordDir = options.recordDirOf(draftDir);
    const { outcome } = await evaluateOneTask(
      options.task,
      { resultDir: path.dirname(recordDir), model: options.model, pairing: options.pairing, candidateDir: draftDir, recordDir },
      await options.evaluator(),
    );
    if (outcome.status === "failed") {
      throw new IwrError("EVALUATOR", `oracle feedback: the evaluator could not score ${draftDir}: ${outcome.error?.message ?? "unknown error"}`);
    }
    return verdictFromRecord(readEvalRecord(candidateFiles(recordDir).eval), options.task, recordDir);
  };
}
