/**
 * The generation run: every task's inputs through the single-pass generator, a few at
 * a time, into the benchmark's results layout:
 *
 *   <result>/<id>/<model-dir>/index.html       the page (only when there is one)
 *   <result>/<id>/<model-dir>/generation.json  what happened: raw reply, usage, cost,
 *                                              latency, cache hit, prompt hash, image
 *                                              counts, model settings, error record
 *
 * A task is finished, and skipped, when its index.html was made by the very request a
 * run would send now (the request hash in generation.json: same prompt, images and
 * model settings); a changed prompt or model setting regenerates it, and `force`
 * regenerates everything. A page without a generation.json was not made here and is
 * left alone (unless `force`). generation.json is written before index.html, both
 * atomically, so a run killed in between redoes the task instead of leaving a page
 * without its record. Per-task failures are recorded and the run goes on; only a dead
 * endpoint (preflight) stops it before any work.
 */

import fs from "node:fs";
import pLimit from "p-limit";
import { z } from "zod";
import { runSinglePass, type SinglePassOutcome, singlePassRequestHash } from "../../agents/single-pass/index.ts";
import { type ErrorRecord, errorMessage } from "../errors.ts";
import { sweepAbandonedTemps, writeFileAtomic } from "../files/atomic.ts";
import { moveAside, readVerifiedJson } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import { withHarnessLimits } from "../models/harness-limits.ts";
import {
  addUsage,
  type CacheMode,
  createModelClient,
  type ModelSpec,
  NO_USAGE,
  openResponseCache,
  preflightModel,
  publicModelSpec,
  type Usage,
  usageOfCall,
} from "../models/index.ts";
import type { ProtocolProfile } from "../protocol.ts";
import { candidateDirFor, candidateFiles, modelDirName } from "../results/layout.ts";
import type { TaskInputs } from "../tasks/inputs.ts";

export const GENERATION_RECORD_VERSION = 1;

export interface GenerateOptions {
  /** What the generator may see of each task; never the truth. */
  tasks: readonly TaskInputs[];
  resultDir: string;
  spec: ModelSpec;
  cacheMode: CacheMode;
  /** Response cache folder (see openResponseCache's default). */
  cacheDir?: string;
  /** Tasks in progress at once (default: the spec's concurrency). */
  workers?: number;
  /** Regenerate every task, also finished ones and pages made elsewhere. */
  force?: boolean;
  /** A prompt variant's template file instead of prompts/generate.md. */
  promptFile?: string;
  /** The sample index of every request (a repeat at temperature > 0); see SinglePassContext.sample. */
  sample?: number;
  /**
   * The protocol profile (default corrected): under official the model's limits come from
   * the harness's table (withHarnessLimits) and its frame and reply rules apply.
   */
  protocol?: ProtocolProfile;
  onProgress?: (progress: GenerateProgress) => void;
  /** Cancels the model calls in flight (a stop's grace period is over): their tasks fail with the cancellation. */
  signal?: AbortSignal;
}

export type TaskStatus = "generated" | "failed" | "skipped";

export interface TaskGenerationResult {
  id: number;
  status: TaskStatus;
  outputDir: string;
  error?: ErrorRecord;
  /** Skipped: why ("unchanged": made by this very request; "foreign": a page without generation.json). */
  skipReason?: "unchanged" | "foreign";
}

export interface GenerateProgress {
  total: number;
  done: number;
  generated: number;
  failed: number;
  skipped: number;
  usage: Usage;
}

export interface GenerateSummary extends GenerateProgress {
  results: TaskGenerationResult[];
  durationMs: number;
}

/** The record written to generation.json. */
export interface GenerationRecord {
  version: number;
  generator: "single-pass";
  taskId: number;
  status: "generated" | "failed";
  /** The protocol profile the page was generated under. */
  protocol: ProtocolProfile;
  model: Record<string, unknown>;
  modelDir: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  prompt?: { name: string; hash: string };
  images?: { sheets: number; frames: number; framesDropped: number; maxImages: number; maxFrames: number; maxImageSide?: number };
  assetsBase?: string;
  reply?: { text: string; usage: { inputTokens: number; outputTokens: number }; costUsd: number; latencyMs: number; cacheHit: boolean; requestHash: string };
  error?: ErrorRecord;
}

export function taskOutputDir(resultDir: string, taskId: number, modelName: string): string {
  return candidateDirFor(resultDir, taskId, modelName);
}

/** The request hash and protocol generation.json recorded for its page, if it is readable and has a hash. */
function recordedRequest(file: string): { requestHash: string; protocol: ProtocolProfile } | undefined {
  const read = readVerifiedJson(file, z.unknown());
  // A damaged record says nothing about the page beside it: moved aside, and the task made again (a cached answer is reused).
  if (read.status === "corrupt") moveAside(file, read.reason, "the task is generated again");
  if (read.status !== "ok") return undefined;
  try {
    const record = read.value;
    if (record === null || typeof record !== "object" || !("reply" in record)) return undefined;
    const { reply, protocol } = record as { reply?: { requestHash?: unknown }; protocol?: unknown };
    if (typeof reply?.requestHash !== "string") return undefined;
    // Records written before profiles existed were made under our rules.
    return { requestHash: reply.requestHash, protocol: protocol === "official" ? "official" : "corrected" };
  } catch {
    return undefined;
  }
}

function buildRecord(inputs: TaskInputs, spec: ModelSpec, outcome: SinglePassOutcome, started: Date, protocol: ProtocolProfile): GenerationRecord {
  const { state } = outcome;
  const finished = new Date();
  return {
    version: GENERATION_RECORD_VERSION,
    generator: "single-pass",
    taskId: inputs.id,
    status: outcome.html !== undefined ? "generated" : "failed",
    protocol,
    model: publicModelSpec(spec),
    modelDir: modelDirName(spec.name),
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    ...(state.prompt ? { prompt: { name: state.prompt.name, hash: state.prompt.hash } } : {}),
    ...(state.imageCounts
      ? {
          images: {
            ...state.imageCounts,
            maxImages: spec.maxImages,
            maxFrames: spec.maxFrames,
            ...(spec.maxImageSide ? { maxImageSide: spec.maxImageSide } : {}),
          },
        }
      : {}),
    ...(state.assetsBase !== undefined ? { assetsBase: state.assetsBase } : {}),
    ...(state.reply ? { reply: state.reply } : {}),
    ...(outcome.failure ? { error: outcome.failure } : {}),
  };
}

/** Runs generation over `options.tasks`; resolves when every task is done, skipped or failed. */
export async function runGeneration(options: GenerateOptions): Promise<GenerateSummary> {
  const logger = log("generate");
  const started = performance.now();
  const protocol = options.protocol ?? "corrected";
  const { resultDir } = options;
  // The harness's limits under official, whatever the preset says (the folder keeps the preset's name).
  const spec = protocol === "official" ? withHarnessLimits(options.spec) : options.spec;
  const cache = openResponseCache(options.cacheDir, options.cacheMode);
  const model = createModelClient(spec, { cache });
  const variant = { protocol, ...(options.promptFile ? { promptFile: options.promptFile } : {}), ...(options.sample ? { sample: options.sample } : {}) };
  const progress: GenerateProgress = { total: options.tasks.length, done: 0, generated: 0, failed: 0, skipped: 0, usage: NO_USAGE };
  const results: TaskGenerationResult[] = [];

  const finish = (result: TaskGenerationResult): void => {
    results.push(result);
    progress.done += 1;
    progress[result.status] += 1;
    options.onProgress?.({ ...progress });
  };
  // What is finished: a page made by the request we would send now. Checked two at a
  // time (each check samples the video again, as the request would).
  type Decision = { generate: true } | { generate: false; skipReason: "unchanged" | "foreign" };
  const decide = async (task: TaskInputs): Promise<Decision> => {
    const outputDir = taskOutputDir(resultDir, task.id, spec.name);
    const files = candidateFiles(outputDir);
    sweepAbandonedTemps(outputDir);
    if (options.force || !fs.existsSync(files.page)) return { generate: true };
    const recorded = recordedRequest(files.generation);
    if (recorded === undefined) {
      logger.warn(`task ${task.id}: ${files.page} has no generation.json (not made by iwr generate): left as it is; --force replaces it`);
      return { generate: false, skipReason: "foreign" };
    }
    try {
      // The same request under the other profile is another page: post-processing follows the profile.
      if (recorded.protocol === protocol && (await singlePassRequestHash(task, { model, outputDir, ...variant })) === recorded.requestHash)
        return { generate: false, skipReason: "unchanged" };
      logger.info(`task ${task.id}: its page was made by another request (prompt, images or model settings changed); generating it again`);
    } catch (error) {
      logger.warn(`task ${task.id}: cannot rebuild its request to compare (${errorMessage(error)}); generating it again`);
    }
    return { generate: true };
  };
  const checkLimit = pLimit(2);
  const decisions = await Promise.all(options.tasks.map((task) => checkLimit(() => decide(task))));
  const pending: TaskInputs[] = [];
  options.tasks.forEach((task, position) => {
    const decision = decisions[position];
    if (!decision || decision.generate) pending.push(task);
    else finish({ id: task.id, status: "skipped", outputDir: taskOutputDir(resultDir, task.id, spec.name), skipReason: decision.skipReason });
  });
  // A replay needs no endpoint; otherwise one clear error before any work beats the same one in every task.
  if (pending.length > 0 && options.cacheMode !== "replay") await preflightModel(spec);

  const limit = pLimit(Math.max(1, options.workers ?? spec.concurrency));

  await Promise.all(
    pending.map((inputs) =>
      limit(async () => {
        const outputDir = taskOutputDir(resultDir, inputs.id, spec.name);
        const files = candidateFiles(outputDir);
        const startedAt = new Date();
        const outcome = await runSinglePass(inputs, { model, outputDir, ...variant }, options.signal ? { signal: options.signal } : {});
        const record = buildRecord(inputs, spec, outcome, startedAt, protocol);
        if (outcome.state.reply) progress.usage = addUsage(progress.usage, usageOfCall(outcome.state.reply));
        // The page goes first and comes back last: a run killed in between leaves a task
        // with no index.html, which a resume regenerates, never an old page beside a new record.
        await fs.promises.rm(files.page, { force: true });
        await writeFileAtomic(files.generation, `${redactString(JSON.stringify(record, null, 2))}\n`);
        if (outcome.html !== undefined) {
          // A reply may quote the API key (a model echoing its instructions): pages are redacted like every record.
          await writeFileAtomic(files.page, redactString(outcome.html));
          finish({ id: inputs.id, status: "generated", outputDir });
          return;
        }
        logger.warn(`task ${inputs.id}: ${outcome.failure?.code ?? "FAILED"}: ${outcome.failure?.message ?? "no page"}`);
        finish({ id: inputs.id, status: "failed", outputDir, ...(outcome.failure ? { error: outcome.failure } : {}) });
      }),
    ),
  );
  results.sort((a, b) => a.id - b.id);
  return { ...progress, results, durationMs: performance.now() - started };
}

/** One line for the end of a run. */
export function summaryLine(summary: GenerateSummary, modelName: string): string {
  const { usage } = summary;
  const cached = usage.cacheHits > 0 ? `, ${usage.cacheHits} from cache` : "";
  return (
    `generate ${modelName}: ${summary.total} task(s): ${summary.generated} generated, ${summary.failed} failed, ${summary.skipped} skipped; ` +
    `${usage.inputTokens} in / ${usage.outputTokens} out tokens${cached}; $${usage.costUsd.toFixed(4)} ($${usage.spentUsd.toFixed(4)} spent now); ` +
    `${(summary.durationMs / 1000).toFixed(1)} s`
  );
}
