/**
 * The generation run: every task's inputs through the single-pass generator, a few at
 * a time, into the benchmark's results layout:
 *
 *   <result>/<id>/<model-dir>/index.html       the page (only when there is one)
 *   <result>/<id>/<model-dir>/generation.json  what happened: raw reply, usage, cost,
 *                                              latency, cache hit, prompt hash, image
 *                                              counts, model settings, error record
 *
 * A task with an index.html is finished and skipped unless `force`. generation.json is
 * written before index.html, both atomically, so a run killed in between redoes the
 * task instead of leaving a page without its record. Per-task failures are recorded
 * and the run goes on; only a dead endpoint (preflight) stops it before any work.
 */
import fs from "node:fs";
import path from "node:path";
import pLimit from "p-limit";
import { runSinglePass, type SinglePassOutcome } from "../../agents/single-pass/index.ts";
import type { ErrorRecord } from "../errors.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import {
  addCallToTotals,
  createModelClient,
  displayURL,
  emptyUsageTotals,
  modelDirName,
  openResponseCache,
  preflightModel,
  type CacheMode,
  type ModelSpec,
  type UsageTotals,
} from "../models/index.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import type { TaskInputs } from "../tasks/schema.ts";

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
  /** Regenerate tasks that already have an index.html. */
  force?: boolean;
  onProgress?: (progress: GenerateProgress) => void;
}

export type TaskStatus = "generated" | "failed" | "skipped";

export interface TaskGenerationResult {
  id: number;
  status: TaskStatus;
  outputDir: string;
  error?: ErrorRecord;
}

export interface GenerateProgress {
  total: number;
  done: number;
  generated: number;
  failed: number;
  skipped: number;
  usage: UsageTotals;
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

/** The spec as results may show it: an endpoint without credentials or query string. */
export function publicModelSpec(spec: ModelSpec): Record<string, unknown> {
  return { ...spec, ...(spec.baseURL ? { baseURL: displayURL(spec.baseURL) } : {}) };
}

export function taskOutputDir(resultDir: string, taskId: number, modelName: string): string {
  return path.join(resultDir, String(taskId), modelDirName(modelName));
}

function buildRecord(inputs: TaskInputs, spec: ModelSpec, outcome: SinglePassOutcome, started: Date): GenerationRecord {
  const { state } = outcome;
  const finished = new Date();
  return {
    version: GENERATION_RECORD_VERSION,
    generator: "single-pass",
    taskId: inputs.id,
    status: outcome.html !== undefined ? "generated" : "failed",
    model: publicModelSpec(spec),
    modelDir: modelDirName(spec.name),
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    ...(state.prompt ? { prompt: { name: state.prompt.name, hash: state.prompt.hash } } : {}),
    ...(state.imageCounts
      ? { images: { ...state.imageCounts, maxImages: spec.maxImages, maxFrames: spec.maxFrames, ...(spec.maxImageSide ? { maxImageSide: spec.maxImageSide } : {}) } }
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
  const { spec, resultDir } = options;
  const pagePath = (id: number): string => path.join(taskOutputDir(resultDir, id, spec.name), "index.html");
  const pending = options.tasks.filter((task) => options.force || !fs.existsSync(pagePath(task.id)));
  const progress: GenerateProgress = { total: options.tasks.length, done: 0, generated: 0, failed: 0, skipped: 0, usage: emptyUsageTotals() };
  const results: TaskGenerationResult[] = [];

  const finish = (result: TaskGenerationResult): void => {
    results.push(result);
    progress.done += 1;
    progress[result.status] += 1;
    options.onProgress?.({ ...progress });
  };
  for (const task of options.tasks) {
    if (!pending.includes(task)) finish({ id: task.id, status: "skipped", outputDir: taskOutputDir(resultDir, task.id, spec.name) });
  }
  // A replay needs no endpoint; otherwise one clear error before any work beats the same one in every task.
  if (pending.length > 0 && options.cacheMode !== "replay") await preflightModel(spec);

  const cache = openResponseCache(options.cacheDir, options.cacheMode);
  const model = createModelClient(spec, { cache });
  const limit = pLimit(Math.max(1, options.workers ?? spec.concurrency));

  await Promise.all(
    pending.map((inputs) =>
      limit(async () => {
        const outputDir = taskOutputDir(resultDir, inputs.id, spec.name);
        const startedAt = new Date();
        const outcome = await runSinglePass(inputs, { model, outputDir });
        const record = buildRecord(inputs, spec, outcome, startedAt);
        if (outcome.state.reply) progress.usage = addCallToTotals(progress.usage, outcome.state.reply);
        // The page goes first and comes back last: a run killed in between leaves a task
        // with no index.html, which a resume regenerates, never an old page beside a new record.
        await fs.promises.rm(path.join(outputDir, "index.html"), { force: true });
        await writeFileAtomic(path.join(outputDir, "generation.json"), `${redactString(JSON.stringify(record, null, 2))}\n`);
        if (outcome.html !== undefined) {
          await writeFileAtomic(path.join(outputDir, "index.html"), outcome.html);
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
