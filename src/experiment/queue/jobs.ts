/**
 * The jobs of queue mode. Each experiment cell is two jobs on two queues, so a model wait
 * never holds a browser slot:
 *
 *   iwr-generate   the arm's generator (model-bound): the cell's page; then it adds
 *   iwr-evaluate   the fixed evaluator (CPU- and browser-bound): eval.json, the drafts'
 *                  scores, the self-check, and the cell's cell.json
 *
 * A job's id is the run key (the config hash), the run folder and the cell key, the same in both queues:
 * adding a job that exists is a no-op, so a cell is queued once however often it is asked
 * for, and a job that runs twice finds its cell's record and leaves it as it is.
 */
import { z } from "zod";
import { sha256Hex } from "../../files/content-hash.ts";
import { CellOutcomeSchema } from "../../results/cell-record.ts";

export const GENERATE_QUEUE = "iwr-generate";
export const EVALUATE_QUEUE = "iwr-evaluate";

/** Where a worker finds the run and how to plan it as the coordinator did. */
export const CellJobSchema = z.object({
  runDir: z.string(),
  runKey: z.string(),
  cellKey: z.string(),
  /** How the coordinator loaded its config: the worker loads the same file the same way. */
  config: z.object({
    file: z.string(),
    out: z.string().optional(),
    taskFile: z.string().optional(),
    ids: z.array(z.number()).optional(),
    judgeRepeats: z.number().optional(),
  }),
  /**
   * When the coordinator queued the cell, the finishedAt of the record already in its folder
   * (a failed one being retried), if any. A record with another finishedAt was written since:
   * the cell is done, and a job run again leaves that record as it is.
   */
  recordBefore: z.string().optional(),
  /** Evaluate jobs: what the generation job made. */
  produced: CellOutcomeSchema.optional(),
  /** For messages: which cell this is. */
  label: z.string(),
});
export type CellJob = z.infer<typeof CellJobSchema>;

/**
 * The run key (16 hex digits), the run folder (8) and the cell key: the same config run into
 * two folders makes two sets of jobs. BullMQ ids may not contain ':'; ours are hex and dashes.
 */
export function cellJobId(runKey: string, runDir: string, cellKey: string): string {
  return `${runKey.slice(0, 16)}-${sha256Hex(runDir).slice(0, 8)}-${cellKey}`;
}

/** Job options: `attempts` tries with a short fixed backoff; finished jobs are kept a week so the ids keep deduplicating. */
export function cellJobOptions(jobId: string, attempts: number) {
  return {
    jobId,
    attempts,
    backoff: { type: "fixed" as const, delay: 1000 },
    removeOnComplete: { age: 7 * 24 * 3600 },
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}
