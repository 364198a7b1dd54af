/**
 * `<results>/<id>/<model-dir>/eval.json`: everything the evaluator found for one task —
 * per-step lists, OCR texts, judge replies, assertion results, success_step,
 * total_steps, the scores — and the `settings` that produced them, so numbers made
 * under different judges, engines or pairing modes are never averaged together.
 *
 * Written atomically (temp file in the same folder, then rename) and never overwritten
 * once finished unless the caller asks to replace it.
 */
import fs from "node:fs";
import { z } from "zod";
import { ErrorRecordSchema, IwrError } from "../errors.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { readVerifiedJson, type VerifiedRead } from "../files/verified-read.ts";
import { redactString } from "../log/redact.ts";
import { PROTOCOL_PROFILES } from "../protocol.ts";
import { aggregateTask } from "./aggregate.ts";
import { type HarnessAssertion, HarnessKeysSchema, harnessKeys } from "./harness-keys.ts";
import type { PairingResult } from "./pairing.ts";
import { PAIRING_MODES } from "./settings.ts";
import { type VisualStep, VisualStepSchema } from "./visual-step.ts";

export const EVAL_RECORD_VERSION = 1;

/** The judge settings: every key must match for two results to be averaged together. */
export const EvalSettingsSchema = z.strictObject({
  /** Logical-assertion judge: "model" or a named offline judge. */
  assertionJudgeKind: z.string(),
  assertionJudgeModel: z.string(),
  /** Click/Type grounding: "model" or a named offline grounding. */
  groundingKind: z.string(),
  groundingModel: z.string(),
  ocrEngine: z.string(),
  ocrEngineVersion: z.string(),
  ocrEngineDetail: z.string(),
  /** "dinov2-base-cls-cosine" or the fallback's name ("ssim-gray-256"). */
  visualMetric: z.string(),
  /** "available" or "unavailable: <reason>" (the reason is informative only, see settingsKey). */
  dinoStatus: z.string(),
  mllmJudgeKind: z.enum(["model", "offline-proxy"]),
  mllmJudgeModel: z.string(),
  pairingMode: z.enum(PAIRING_MODES),
  /**
   * The protocol profile (src/protocol.ts): `official` reproduces the harness, `corrected`
   * keeps our choices. Records written before profiles existed were made under our rules.
   */
  protocol: z.enum(PROTOCOL_PROFILES).default("corrected"),
  /** Prompt name → sha256 of its template file. */
  promptHashes: z.record(z.string(), z.string()),
  /** Where the record came from: our evaluator, or a foreign (harness) eval.json read by rescore. */
  source: z.enum(["iwr", "iwr-bench-harness"]).default("iwr"),
});
export type EvalSettings = z.infer<typeof EvalSettingsSchema>;

export const AssertionResultSchema = z.object({
  actionIndex: z.number().int().nonnegative(),
  assertion: z.string(),
  /** "Error": the judge gave no usable answer and the profile (official) records it as the harness does, without cutting success_step. */
  result: z.enum(["Yes", "No", "Error"]),
  think: z.string().optional(),
  reply: z.string().optional(),
  /** With judge repeats: every judgement's result, the scored one first. */
  repeats: z.array(z.enum(["Yes", "No"])).optional(),
});

const unit = z.number().min(0).max(1);
export const TaskScoresSchema = z.object({
  ifs: unit,
  lfs: unit,
  hfs: unit,
  vfs: unit,
  final: unit,
  ocrMean: unit,
  dinoMean: unit,
  mllmMean: z.number().min(0).max(100),
  countedSteps: z.number().int().nonnegative(),
});

/** What the record scored, as hashes (eval-keys.ts): a rerun redoes the task when any of them changed. */
export const EvalInputKeysSchema = z.object({
  candidate: z.string().nullable(),
  task: z.string(),
  settings: z.string(),
});

export const EvalRecordSchema = z
  .object({
    version: z.literal(EVAL_RECORD_VERSION),
    taskId: z.number().int().nonnegative(),
    model: z.string(),
    createdAt: z.string(),
    totalSteps: z.number().int().nonnegative(),
    executedSteps: z.number().int().nonnegative(),
    successStep: z.number().int().nonnegative(),
    /** Why the replay stopped early (action failure, page load failure), if it did. */
    stopReason: ErrorRecordSchema.optional(),
    assertions: z.array(AssertionResultSchema),
    /** The per-step lists as §3.6 reads them (already at most success_step + 1 entries). */
    lists: z.object({ ocr: z.array(unit), dino: z.array(unit), mllm: z.array(z.number().min(0).max(100)) }),
    steps: z.array(VisualStepSchema),
    /** Visual-list entries cut by the success_step + 1 rule (recorded, not scored). */
    truncated: z.array(z.object({ position: z.number().int(), actionIndex: z.number().int().nullable(), evalpoint: z.number().int() })),
    scores: TaskScoresSchema,
    settings: EvalSettingsSchema,
    /** Absent in records written before results were keyed: such a record is always redone. */
    inputs: EvalInputKeysSchema.optional(),
    /**
     * Requests the sandbox refused (anything not served from 127.0.0.1: a CDN, a web font,
     * an API). The harness opens pages from file:// with the network open, so a page that
     * relied on the network may score differently there; this count shows when.
     */
    network: z.object({ blockedRequests: z.number().int().nonnegative() }).optional(),
    /** Whether the replay ran in deterministic mode (the task's seed and clock start), and why. Absent in older records. */
    determinism: z
      .object({
        seeded: z.boolean(),
        randomSeed: z.number().int().nonnegative().optional(),
        clockStart: z.string().optional(),
        steppedClock: z.boolean().optional(),
        reason: z.string(),
      })
      .optional(),
  })
  .extend(HarnessKeysSchema.shape);
export type EvalRecord = z.infer<typeof EvalRecordSchema>;

function describeIssue(file: string, error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join(".") : "(root)";
  return `${file}: ${where}: ${issue?.message ?? "invalid"}`;
}

/** Validates and writes a record. Refuses to replace an existing file unless `replace` is set. */
export function writeEvalRecord(file: string, record: EvalRecord, options: { replace?: boolean } = {}): void {
  const checked = EvalRecordSchema.safeParse(record);
  if (!checked.success) throw new IwrError("EVALUATOR", `refusing to write an invalid eval record: ${describeIssue(file, checked.error)}`);
  if (!options.replace && fs.existsSync(file)) {
    throw new IwrError("IO", `${file} already exists: a finished result is never rewritten (pass replace to re-evaluate on purpose)`, { file });
  }
  // The string, not the object: redact() would mask keys such as "inputTokens" too.
  writeFileAtomicSync(file, redactString(`${JSON.stringify(checked.data, null, 2)}\n`));
}

export function parseEvalRecord(raw: unknown, file: string): EvalRecord {
  const parsed = EvalRecordSchema.safeParse(raw);
  if (!parsed.success) throw new IwrError("EVALUATOR", describeIssue(file, parsed.error), { file });
  return parsed.data;
}

export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new IwrError("IO", `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, { file }, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new IwrError("EVALUATOR", `${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`, { file });
  }
}

/** eval.json verified: there, absent, or damaged (unparsable, of another shape or version) with the reason. */
export function verifyEvalRecord(file: string): VerifiedRead<EvalRecord> {
  return readVerifiedJson(file, EvalRecordSchema);
}

export function readEvalRecord(file: string): EvalRecord {
  return parseEvalRecord(readJsonFile(file), file);
}

/**
 * The settings that must agree for results to be averaged, as flat "key=value" entries.
 * `dinoStatus` counts only as available/unavailable: the reason text may differ between
 * machines without changing the metric (the metric's name already says which ran).
 */
export function comparableSettings(settings: EvalSettings): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (key === "promptHashes") continue;
    flat[key] = key === "dinoStatus" ? (String(value).split(":")[0] ?? "") : String(value);
  }
  for (const [name, hash] of Object.entries(settings.promptHashes)) flat[`promptHashes.${name}`] = hash;
  return flat;
}

export interface EvalRecordParts {
  taskId: number;
  model: string;
  totalSteps: number;
  executedSteps: number;
  successStep: number;
  stopReason?: EvalRecord["stopReason"];
  assertions: EvalRecord["assertions"];
  /** From scoreVisualPairs(pairing.pairs, …), in list order. */
  steps: readonly VisualStep[];
  /** From pairEvalpoints(…). */
  pairing: Pick<PairingResult, "truncated" | "mode">;
  /**
   * Entries the success_step + 1 cut dropped, scored too when the profile scores them
   * (official: the harness's untruncated lists); they never enter our scores.
   */
  cutSteps?: readonly VisualStep[];
  /** Per action of the task: the judged assertion as the harness records it, or null. */
  harnessAssertions?: readonly (HarnessAssertion | null)[];
  /** Everything but pairingMode and source, which come from `pairing` and this evaluator. */
  settings: Omit<EvalSettings, "pairingMode" | "source">;
  inputs?: z.infer<typeof EvalInputKeysSchema>;
  createdAt?: Date;
}

/** Assembles a validated record: the §3.6 lists from the scored steps, and the scores from aggregateTask. */
export function buildEvalRecord(parts: EvalRecordParts): EvalRecord {
  const lists = {
    ocr: parts.steps.map((step) => step.ocr),
    dino: parts.steps.map((step) => step.dino),
    mllm: parts.steps.map((step) => step.mllm),
  };
  const scores = aggregateTask({ ...lists, successStep: parts.successStep, totalSteps: parts.totalSteps });
  const record: EvalRecord = {
    version: EVAL_RECORD_VERSION,
    taskId: parts.taskId,
    model: parts.model,
    createdAt: (parts.createdAt ?? new Date()).toISOString(),
    totalSteps: parts.totalSteps,
    executedSteps: parts.executedSteps,
    successStep: parts.successStep,
    ...(parts.stopReason ? { stopReason: parts.stopReason } : {}),
    assertions: [...parts.assertions],
    lists,
    steps: [...parts.steps],
    truncated: parts.pairing.truncated.map(({ position, actionIndex, evalpoint }) => ({ position, actionIndex, evalpoint })),
    scores,
    settings: { ...parts.settings, pairingMode: parts.pairing.mode, source: "iwr" },
    ...(parts.inputs ? { inputs: parts.inputs } : {}),
    ...harnessKeys({
      totalSteps: parts.totalSteps,
      successStep: parts.successStep,
      steps: [...parts.steps, ...(parts.cutSteps ?? [])],
      assertions: parts.harnessAssertions ?? Array.from({ length: parts.totalSteps }, () => null),
    }),
  };
  return parseEvalRecord(record, `eval record of task ${parts.taskId}`);
}
