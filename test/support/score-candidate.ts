/**
 * Scoring a task's own pages in the recorder's tests: the true page staged as a candidate,
 * scored by the offline judge and grounding under a profile, and its evalpoints read as
 * raw pixels beside the task's checkpoints.
 */
import path from "node:path";
import sharp from "sharp";
import { createEvaluator } from "../../src/evaluator/create-evaluator.ts";
import { type EvalRecord, readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { evaluateTask } from "../../src/evaluator/evaluate-task.ts";
import type { ProtocolProfile } from "../../src/protocol.ts";
import { candidateFiles } from "../../src/results/layout.ts";
import type { Task } from "../../src/tasks/schema.ts";

/** Scores `candidateDir` against `task` as a calibration candidate (seeded replay) and reads its eval.json. */
export async function scoreCandidate(task: Task, candidateDir: string, model: string, profile: ProtocolProfile = "corrected"): Promise<EvalRecord> {
  const evaluator = await createEvaluator({ judge: "heuristic", grounding: "heuristic", workers: 1, trace: false, profile });
  await evaluateTask({ task, candidateDir, model, pairingModes: ["aligned"], evaluator, calibration: true });
  return readEvalRecord(candidateFiles(candidateDir).eval);
}

/** A picture's raw pixels, to compare two pictures exactly. */
export const pixelsOf = (file: string): Promise<Buffer> => sharp(file).raw().toBuffer();

/** A scored candidate's evalpoint k as raw pixels. */
export const evalpointPixels = (candidateDir: string, index: number): Promise<Buffer> => pixelsOf(path.join(candidateDir, "evalpoints", `${index}.png`));
