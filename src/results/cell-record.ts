/**
 * cell.json: the outcome of one experiment cell (task × arm × repeat), in the cell's
 * candidate folder beside index.html and eval.json. It is what `iwr run` reads to skip a
 * finished cell and what reports read for cost, wall time, the agent's drafts and the
 * self-check; scores themselves come from eval.json.
 */
import { z } from "zod";
import { ErrorRecordSchema } from "../errors.ts";
import { readVerifiedJson, type VerifiedRead } from "../files/verified-read.ts";
import { UsageSchema } from "../models/usage.ts";

export const CELL_RECORD_VERSION = 1;

/** The generator's side: "made" (a page is there) or "failed" (none: the evaluator scores the cell 0, as the benchmark does). */
export const CellOutcomeSchema = z.object({
  status: z.enum(["made", "failed"]),
  error: ErrorRecordSchema.optional(),
  /** What making the page cost: model calls and their tokens, dollars and wait. */
  usage: UsageSchema,
  wallMs: z.number(),
  /** Agent arms: the agent's best self-score. */
  selfScore: z.number().optional(),
  /** Agent arms: each saved draft's folder, scored afterwards for the score-by-iteration curve. */
  iterations: z.array(z.object({ draft: z.number(), round: z.number(), dir: z.string(), selfScore: z.number().optional() })).optional(),
});
export type CellOutcome = z.infer<typeof CellOutcomeSchema>;

export const CellEvaluationSchema = z.object({
  status: z.enum(["evaluated", "skipped", "failed"]),
  final: z.number().optional(),
  ifs: z.number().optional(),
  error: ErrorRecordSchema.optional(),
  wallMs: z.number(),
});
export type CellEvaluation = z.infer<typeof CellEvaluationSchema>;

/** An agent draft's evaluator score (reported only; never fed back). */
export const IterationScoreSchema = z.object({
  draft: z.number(),
  round: z.number(),
  selfScore: z.number().optional(),
  final: z.number().optional(),
  error: ErrorRecordSchema.optional(),
});
export type IterationScore = z.infer<typeof IterationScoreSchema>;

export const CellSelfCheckSchema = z.object({
  selfScore: z.number().optional(),
  error: ErrorRecordSchema.optional(),
  wallMs: z.number(),
});
export type CellSelfCheck = z.infer<typeof CellSelfCheckSchema>;

export const CellRecordSchema = z.object({
  version: z.literal(CELL_RECORD_VERSION),
  cellKey: z.string(),
  arm: z.string(),
  kind: z.string(),
  repeat: z.number().int().nonnegative(),
  taskId: z.number().int().nonnegative(),
  /** "finished": a page was made and scored; "failed": the generator or the evaluator failed (error says which). */
  status: z.enum(["finished", "failed"]),
  produced: CellOutcomeSchema,
  evaluation: CellEvaluationSchema,
  iterations: z.array(IterationScoreSchema),
  /** The page's self-check (given track), when the experiment asked for it. */
  selfCheck: CellSelfCheckSchema.optional(),
  error: ErrorRecordSchema.extend({ stage: z.enum(["generate", "evaluate"]) }).optional(),
  finishedAt: z.string(),
});
export type CellRecord = z.infer<typeof CellRecordSchema>;

/** The record in `file`, verified: there, absent, or damaged (unparsable, of another shape or version) with the reason. */
export function verifyCellRecord(file: string): VerifiedRead<CellRecord> {
  return readVerifiedJson(file, CellRecordSchema);
}

/**
 * The record in `file`, or undefined when it is absent or damaged: for callers that poll a
 * record another process is writing (atomically). Whoever decides from a record whether a
 * cell is finished uses verifyCellRecord and says what it found.
 */
export function readCellRecord(file: string): CellRecord | undefined {
  const read = verifyCellRecord(file);
  return read.status === "ok" ? read.value : undefined;
}
