/**
 * The visual scoring of one task (§3.5): for every counted pair (evalpoint, checkpoint)
 * the OCR similarity, the DINO (or named fallback) similarity and the MLLM judge score.
 *
 * Usage by the evaluate command:
 *   const scorers = await createVisualScorers({ judge });          // once per process
 *   const pairing = pairEvalpoints({ flags, successStep, evalpointPaths, checkpointPaths, mode });
 *   const steps = await scoreVisualPairs(pairing.pairs, scorers);
 *   const record = buildEvalRecord({ ..., steps, pairing, settings: { ...visualSettings(scorers), ... } });
 *   ...at shutdown: await shutdownVisualScorers();
 */
import fs from "node:fs/promises";
import sharp from "sharp";
import { errorMessage, IwrError } from "../errors.ts";
import { unloadDinoModels } from "../metrics/dino.ts";
import type { DinoLocation } from "../metrics/dino-location.ts";
import { compareOcr, type OcrEngineInfo, ocrEngineInfo, shutdownOcr } from "../metrics/ocr.ts";
import { readingFor } from "../metrics/ocr-cost.ts";
import { createVisualMetric, type VisualMetric } from "../metrics/visual.ts";
import type { EvalSettings } from "./eval-record.ts";
import { createOfflineProxyJudge, type MllmJudge } from "./mllm-judge.ts";
import type { VisualPair } from "./pairing.ts";
import type { VisualStep } from "./visual-step.ts";

export interface VisualScorers {
  readonly ocr: OcrEngineInfo;
  readonly visual: VisualMetric;
  readonly judge: MllmJudge;
}

/**
 * Starts the OCR worker and the visual metric (DINO when present, else the fallback)
 * and takes the MLLM judge (the offline proxy when none is given).
 */
export async function createVisualScorers(options: { judge?: MllmJudge; dinoLocation?: DinoLocation } = {}): Promise<VisualScorers> {
  const [ocr, visual] = await Promise.all([ocrEngineInfo(), createVisualMetric({ location: options.dinoLocation })]);
  return { ocr, visual, judge: options.judge ?? createOfflineProxyJudge() };
}

/** Ends the OCR worker and drops loaded DINO models. */
export async function shutdownVisualScorers(): Promise<void> {
  unloadDinoModels();
  await shutdownOcr();
}

/** The `settings` keys the visual scorers decide (the rest — assertion judge, grounding — come from the replay). */
export function visualSettings(scorers: VisualScorers): Pick<
  EvalSettings,
  "ocrEngine" | "ocrEngineVersion" | "ocrEngineDetail" | "visualMetric" | "dinoStatus" | "mllmJudgeKind" | "mllmJudgeModel"
> & {
  promptHashes: Record<string, string>;
} {
  const dino = scorers.visual.info.dino;
  const promptHashes: Record<string, string> = {};
  if (scorers.judge.info.promptHash) promptHashes["judge-visual"] = scorers.judge.info.promptHash;
  return {
    ocrEngine: scorers.ocr.name,
    ocrEngineVersion: scorers.ocr.version,
    ocrEngineDetail: scorers.ocr.detail,
    visualMetric: scorers.visual.info.name,
    dinoStatus: dino.status === "available" ? "available" : `unavailable: ${dino.reason}`,
    mllmJudgeKind: scorers.judge.info.kind,
    mllmJudgeModel: scorers.judge.info.name,
    promptHashes,
  };
}

async function readPng(file: string, role: string): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch (error) {
    throw new IwrError("EVALUATOR", `${role} ${file} cannot be read: ${errorMessage(error)}`, { file }, { cause: error });
  }
}

/** Which of the two files is not a readable image, named for the error message; undefined when both decode. */
async function unreadableImage(files: ReadonlyArray<{ role: string; file: string; png: Buffer }>): Promise<string | undefined> {
  for (const { role, file, png } of files) {
    if (png.length === 0) return `${role} ${file} is empty (0 bytes)`;
    // A full decode: a truncated PNG has a readable header. (sharp throws at construction for some inputs.)
    const problem = await Promise.resolve()
      .then(() => sharp(png).stats())
      .then(
        () => undefined,
        (error: unknown) => errorMessage(error),
      );
    if (problem !== undefined) return `${role} ${file} is not a readable image (${problem})`;
  }
  return undefined;
}

/** Whether an OCR reading holds any text a person reads: a word of three letters or more, or a number of two digits or more. */
function showsText(reading: string): boolean {
  return /\p{L}{3,}|\p{N}{2,}/u.test(reading);
}

/** What OCR reads when a pair is scored: only what the replay's own readings (evaluate-task.ts) left unread (ocr-cost.ts). */
const SCORED_PAIR_PURPOSE = "OCR metric: a pair's screens not read during the replay";

async function scorePair(pair: VisualPair, scorers: VisualScorers, options: ScoringOptions): Promise<VisualStep> {
  const [reference, candidate] = await Promise.all([readPng(pair.checkpointPath, "checkpoint"), readPng(pair.evalpointPath, "evalpoint")]);
  let scores: [Awaited<ReturnType<typeof compareOcr>>, number];
  try {
    scores = await Promise.all([readingFor(SCORED_PAIR_PURPOSE, () => compareOcr(reference, candidate)), scorers.visual.similarity(reference, candidate)]);
  } catch (error) {
    // The metrics' own messages ("Input buffer contains unsupported image format") do not say which file.
    const culprit = await unreadableImage([
      { role: "checkpoint", file: pair.checkpointPath, png: reference },
      { role: "evalpoint", file: pair.evalpointPath, png: candidate },
    ]);
    // Both images fine: the metric itself failed (an OCR engine that cannot start...), its error says so.
    if (culprit === undefined) throw error;
    throw new IwrError("EVALUATOR", `${culprit}: ${errorMessage(error)}`, { checkpoint: pair.checkpointPath, evalpoint: pair.evalpointPath }, { cause: error });
  }
  const [reading, dino] = scores;
  const textless = options.textlessPairs === "visual-similarity" && !showsText(reading.checkpointText) && !showsText(reading.screenshotText);
  const ocr = textless ? { ...reading, similarity: dino } : reading;
  const judgement = await scorers.judge.judge({ reference, candidate, ocrSimilarity: ocr.similarity, visualSimilarity: dino });
  return {
    position: pair.position,
    actionIndex: pair.actionIndex,
    evalpoint: pair.evalpoint,
    evalpointPath: pair.evalpointPath,
    checkpointPath: pair.checkpointPath,
    ocr: ocr.similarity,
    dino,
    mllm: judgement.score,
    checkpointText: ocr.checkpointText,
    screenshotText: ocr.screenshotText,
    judgeReply: judgement.reply,
    judgeParsed: judgement.parsed,
  };
}

/** Scores every pair (in parallel; OCR is serialised by its single worker). Steps come back in list order. */
export interface ScoringOptions {
  /** The profile's OCR term for pairs without any text (ProfileRules.textlessPairs); default as the harness computes it. */
  textlessPairs?: "text-similarity" | "visual-similarity";
}

export function scoreVisualPairs(pairs: readonly VisualPair[], scorers: VisualScorers, options: ScoringOptions = {}): Promise<VisualStep[]> {
  return Promise.all(pairs.map((pair) => scorePair(pair, scorers, options)));
}
