/**
 * The agent run: the reconstruction agent (agents/reconstruct) on every task, a few at a
 * time, into the results layout beside the single-pass folders:
 *
 *   <result>/<id>/<model-dir>@agent/index.html     the best draft (only for a finished run)
 *   <result>/<id>/<model-dir>@agent/agent.json     iterations, stop reason, self-scores,
 *                                                  usage per node, cost, latency, prompt
 *                                                  hashes, switches, checkpoint sizes
 *   <result>/<id>/<model-dir>@agent/work/...       the agent's work folder: every draft and its self-check
 *
 * With `feedback: "oracle"` (a separate, labelled track: "oracle feedback (uses the task's
 * truth)") the agent's feedback is the fixed evaluator's verdict on each draft
 * (oracle-feedback.ts) instead of the self-check, its folder is `<model-dir>@agent-oracle/`
 * (the evaluator's records of the drafts in its `oracle-scores/`), and its model requests
 * are keyed under their own track, so no response cached for one track answers the other.
 *
 * A task is finished, and skipped, when its agent.json says so for the same settings and
 * models; `resume` continues an interrupted one from its checkpoint, otherwise it starts
 * afresh. agent.json is written before index.html, index.html is removed first: a run
 * killed in between leaves no page beside a stale record. Per-task failures are recorded
 * in agent.json and the run goes on.
 */
import fs from "node:fs";
import path from "node:path";
import pLimit from "p-limit";
import { z } from "zod";
import {
  type AgentProgressEvent,
  type AgentSettings,
  type AgentSettingsInput,
  AgentSettingsSchema,
  type AgentValues,
  type FeedbackProvider,
  runReconstructionAgent,
  selfCheckFeedback,
  settingsHash,
  totalUsage,
  writePageTo,
} from "../../agents/reconstruct/index.ts";
import { defaultPageMemoryLimitMiB } from "../browser/host.ts";
import { closeSharedBrowser } from "../browser/launch.ts";
import { type ErrorRecord, errorMessage, IwrError, toErrorRecord } from "../errors.ts";
import type { Evaluator } from "../evaluator/evaluate-task.ts";
import type { PairingMode } from "../evaluator/settings.ts";
import { createPageSlots } from "../evaluator/task-pipeline.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { moveAside, readVerifiedJson } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import { ocrPoolSizeFor, setOcrPoolSize, shutdownOcr } from "../metrics/ocr.ts";
import { createVisualMetric } from "../metrics/visual.ts";
import {
  addUsage,
  type CacheMode,
  createModelClient,
  forRepeat,
  forTrack,
  type ModelClient,
  type ModelSpec,
  NO_USAGE,
  openResponseCache,
  preflightModel,
  publicModelSpec,
} from "../models/index.ts";
import { replayActionOf } from "../replay/replay.ts";
import { agentDirFor, agentFiles } from "../results/layout.ts";
import { type AgentFeedbackKind, ORACLE_FEEDBACK_LABEL } from "../results/tracks.ts";
import type { Task } from "../tasks/schema.ts";
import { oracleFeedback } from "./oracle-feedback.ts";

/** The cache-key track of the oracle-feedback agent's model requests (see forTrack). */
const ORACLE_TRACK = "oracle-feedback";

export const AGENT_RECORD_VERSION = 1;

/**
 * `--wall-time` starts no new round once it has passed; a round still running that long
 * after it (a stalled model call, a slow self-check) is cut, and the task keeps the best
 * draft it had.
 */
export const WALL_TIME_GRACE_MS = 5_000;

export interface AgentRunSettings {
  tasks: readonly Task[];
  resultDir: string;
  drafter: ModelSpec;
  /** Analysis and critique model (default: the drafter). */
  critic?: ModelSpec;
  settings: AgentSettingsInput;
  cacheMode: CacheMode;
  cacheDir?: string;
  workers?: number;
  resume?: boolean;
  force?: boolean;
  statesCacheDir?: string;
  shouldStop?: () => boolean;
  /**
   * The hard stop: cancels a task's node in flight (a model call, a page being checked); the
   * task ends as stopped, its checkpoint kept. A caller aborts it a grace period after the
   * soft stop (`shouldStop`) when the node has not finished by then.
   */
  signal?: AbortSignal;
  onProgress?: (taskId: number, event: AgentProgressEvent) => void;
  /** Which repeat of an experiment this is (0 = the first): its requests are new samples (forRepeat). */
  repeat?: number;
  /** Leave the shared browser and OCR workers open at the end (a caller that runs more work on them). */
  keepSharedResources?: boolean;
  /**
   * The agent's feedback: the self-check (the default), or `oracle`, the fixed evaluator's
   * verdict on each draft — the task's truth, a separate labelled track (needs `oracle`).
   */
  feedback?: AgentFeedbackKind;
  /** With feedback `oracle`: the fixed evaluator (opened on first use; the caller closes it) and its pairing. */
  oracle?: { evaluator: () => Promise<Evaluator>; pairing: PairingMode };
}

export type AgentTaskStatus = "finished" | "stopped" | "failed" | "skipped";

export interface AgentTaskResult {
  id: number;
  status: AgentTaskStatus;
  dir: string;
  stopReason?: string;
  bestSelfScore?: number;
  /** Model usage per node (absent for a skipped task). */
  usageByNode?: AgentValues["usageByNode"];
  error?: ErrorRecord;
}

/** Tokens and cost per node over a run's tasks, one line each (the closing summary of `iwr agent`). */
export function usageSummaryLines(results: readonly AgentTaskResult[]): string[] {
  const byNode = new Map<string, ReturnType<typeof totalUsage>>();
  for (const result of results) {
    for (const [node, usage] of Object.entries(result.usageByNode ?? {})) byNode.set(node, addUsage(byNode.get(node) ?? NO_USAGE, usage));
  }
  return [...byNode].map(
    ([node, usage]) =>
      `  ${node.padEnd(9)} ${usage.calls} call(s), ${usage.images} image(s), ${usage.inputTokens} in / ${usage.outputTokens} out tokens, ` +
      `$${usage.costUsd.toFixed(4)}, ${(usage.latencyMs / 1000).toFixed(1)} s${usage.cacheHits ? `, ${usage.cacheHits} from cache` : ""}`,
  );
}

/** The record written to agent.json. */
export interface AgentRecord {
  version: number;
  generator: "agent";
  taskId: number;
  status: "finished" | "stopped" | "failed";
  /** "given" results are a separate track: the task's action descriptions were provided. */
  track: "inferred" | "given-actions";
  /** Which feedback the agent had (records made before the switch existed: the self-check). */
  feedback: AgentFeedbackKind;
  /** With oracle feedback: "oracle feedback (uses the task's truth)". */
  feedbackLabel?: string;
  settings: AgentSettings;
  settingsHash: string;
  models: { drafter: Record<string, unknown>; critic: Record<string, unknown> };
  threadId?: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  stopReason?: string;
  bestDraft?: number;
  bestSelfScore?: number;
  /** Best self-score after each round (0 = the first drafts). */
  selfScoreByRound: number[];
  drafts: AgentValues["drafts"];
  analysis?: AgentValues["analysis"];
  critique?: AgentValues["latestCritique"];
  usageByNode: AgentValues["usageByNode"];
  usage: ReturnType<typeof totalUsage>;
  promptHashes: Record<string, string>;
  checkpoint?: { rows: number; largestBytes: number; totalBytes: number };
  /** Wall time spent waiting for models, and the rest (self-checks, selection, bookkeeping). */
  timings: { modelMs: number; otherMs: number };
  error?: ErrorRecord;
}

function selfScoreByRound(drafts: AgentValues["drafts"]): number[] {
  const rounds = drafts.reduce((last, draft) => Math.max(last, draft.round), -1) + 1;
  let best = 0;
  return Array.from({ length: rounds }, (_, round) => {
    for (const draft of drafts) if (draft.round === round && draft.page && (draft.selfScore ?? 0) > best) best = draft.selfScore ?? 0;
    return best;
  });
}

function readRecord(file: string): Partial<AgentRecord> | undefined {
  const read = readVerifiedJson(file, z.record(z.string(), z.unknown()));
  // A damaged agent.json cannot say the task finished: moved aside, and the task resumes from its checkpoint.
  if (read.status === "corrupt") moveAside(file, read.reason, "the task resumes from its checkpoint");
  return read.status === "ok" ? (read.value as Partial<AgentRecord>) : undefined;
}

const constant =
  <T>(value: T) =>
  (): T =>
    value;

/**
 * The oracle track's feedback for one task: each draft (`work/iterations/<draft>/`) scored by
 * the fixed evaluator into `oracle-scores/<draft>/`, outside the work folder.
 */
function oracleFeedbackFor(task: Task, dir: string, oracle: NonNullable<AgentRunSettings["oracle"]>): FeedbackProvider {
  const verdictOf = oracleFeedback({
    task,
    evaluator: oracle.evaluator,
    pairing: oracle.pairing,
    model: path.basename(dir),
    recordDirOf: (draftDir) => {
      const draft = Number(path.basename(draftDir));
      if (!Number.isInteger(draft) || draft < 0) throw new IwrError("EVALUATOR", `oracle feedback: ${draftDir} is not a draft's folder`);
      return agentFiles(dir).oracleScores(draft);
    },
  });
  return (request) => verdictOf(request.draftDir);
}

export async function runAgentRun(options: AgentRunSettings): Promise<AgentTaskResult[]> {
  const logger = log("agent");
  const settings = AgentSettingsSchema.parse(options.settings);
  const hash = settingsHash(settings);
  const feedbackKind = options.feedback ?? "self-check";
  const oracle = options.oracle;
  if (feedbackKind === "oracle" && !oracle) throw new IwrError("CONFIG_INVALID", "oracle feedback needs the evaluator that scores the drafts");
  const criticSpec = options.critic ?? options.drafter;
  const cache = openResponseCache(options.cacheDir, options.cacheMode);
  const drafterSpec = settings.temperature !== undefined ? { ...options.drafter, temperature: settings.temperature } : options.drafter;
  const repeat = options.repeat ?? 0;
  // The oracle track's requests are keyed apart: its first drafts' requests are the self-check track's very requests.
  const onTrack = (client: ModelClient) => (feedbackKind === "oracle" ? forTrack(client, ORACLE_TRACK) : client);
  const drafter = onTrack(forRepeat(createModelClient(drafterSpec, { cache }), repeat));
  const critic = onTrack(forRepeat(createModelClient(options.critic ?? options.drafter, { cache }), repeat));
  const models = { drafter: publicModelSpec(drafterSpec), critic: publicModelSpec(criticSpec) };
  const workers = Math.max(1, options.workers ?? 1);

  const isFinished = (dir: string): boolean => {
    const record = readRecord(agentFiles(dir).record);
    return (
      !options.force &&
      record?.status === "finished" &&
      record.settingsHash === hash &&
      (record.feedback ?? "self-check") === feedbackKind &&
      fs.existsSync(agentFiles(dir).page) &&
      JSON.stringify(record.models) === JSON.stringify(models)
    );
  };
  const dirOf = (task: Task) => agentDirFor(options.resultDir, task.id, options.drafter.name, "--model", feedbackKind);
  const pending = options.tasks.filter((task) => !isFinished(dirOf(task)));
  const results: AgentTaskResult[] = options.tasks
    .filter((task) => !pending.includes(task))
    .map((task) => ({ id: task.id, status: "skipped", dir: dirOf(task) }));
  if (pending.length === 0) return results.sort((a, b) => a.id - b.id);
  if (options.cacheMode !== "replay") {
    await preflightModel(drafterSpec);
    if (options.critic) await preflightModel(options.critic);
  }

  setOcrPoolSize(ocrPoolSizeFor(workers));
  // Drafts of one task are checked at once: room for a whole breadth of pages per worker.
  const pageSlots = createPageSlots(workers * settings.breadth);
  // The oracle track is wired in here and only here, by the switch; otherwise every task shares one self-check.
  const feedbackFor: (task: Task, dir: string) => FeedbackProvider =
    feedbackKind === "oracle" && oracle
      ? (task, dir) => oracleFeedbackFor(task, dir, oracle)
      : constant(
          selfCheckFeedback({
            metric: await createVisualMetric(),
            pageSlots,
            memoryLimitMiB: defaultPageMemoryLimitMiB(workers),
            ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}),
          }),
        );
  const limit = pLimit(workers);
  try {
    await Promise.all(
      pending.map((task) =>
        limit(async () => {
          const dir = dirOf(task);
          const files = agentFiles(dir);
          const started = new Date();
          const base = {
            version: AGENT_RECORD_VERSION,
            generator: "agent" as const,
            taskId: task.id,
            track: settings.trajectory === "given" ? ("given-actions" as const) : ("inferred" as const),
            feedback: feedbackKind,
            ...(feedbackKind === "oracle" ? { feedbackLabel: ORACLE_FEEDBACK_LABEL } : {}),
            settings,
            settingsHash: hash,
            models,
            startedAt: started.toISOString(),
          };
          await fs.promises.rm(files.page, { force: true });
          let record: AgentRecord;
          let result: AgentTaskResult;
          let best: AgentValues["drafts"][number] | undefined;
          // The wall time bounds the calls in flight too: past it and its grace, the node running is cancelled.
          const wallTime = settings.wallTimeSec !== undefined ? AbortSignal.timeout(settings.wallTimeSec * 1000 + WALL_TIME_GRACE_MS) : undefined;
          const stops = [options.signal, wallTime].filter((signal) => signal !== undefined);
          const signal = stops.length > 0 ? AbortSignal.any(stops) : undefined;
          try {
            const outcome = await runReconstructionAgent(
              // What the agent may see: the task's inputs; in the "given" track also the line's action descriptions.
              task.inputs,
              {
                drafter,
                critic,
                // Its own folder inside the agent folder: records scored after the fact stay out of its reach.
                workDir: files.work.dir,
                feedback: feedbackFor(task, dir),
                ...(options.statesCacheDir ? { statesCacheDir: options.statesCacheDir } : {}),
              },
              {
                settings,
                ...(settings.trajectory === "given" ? { givenActions: task.line.action_sequence.map(replayActionOf) } : {}),
                ...(options.resume ? { resume: true } : {}),
                ...(options.shouldStop ? { shouldStop: options.shouldStop } : {}),
                ...(signal ? { signal } : {}),
                onProgress: (event) => options.onProgress?.(task.id, event),
              },
            );
            const { state } = outcome;
            best = state.drafts.find((draft) => draft.id === state.bestDraftId);
            const usage = totalUsage(state.usageByNode);
            const finishedAt = new Date();
            // Cut by the wall time (not by a stop request): the best draft so far is the task's page, as at a round's end.
            const cutByWallTime = !outcome.finished && wallTime?.aborted === true && !options.signal?.aborted && best?.page !== undefined;
            const status = outcome.finished || cutByWallTime ? "finished" : "stopped";
            const stopReason = state.stopReason ?? (cutByWallTime ? "wall-time" : undefined);
            record = {
              ...base,
              status,
              threadId: outcome.threadId,
              finishedAt: finishedAt.toISOString(),
              durationMs: finishedAt.getTime() - started.getTime(),
              ...(stopReason ? { stopReason } : {}),
              ...(best ? { bestDraft: best.id, ...(best.selfScore !== undefined ? { bestSelfScore: best.selfScore } : {}) } : {}),
              selfScoreByRound: selfScoreByRound(state.drafts),
              drafts: state.drafts,
              ...(state.analysis ? { analysis: state.analysis } : {}),
              ...(state.latestCritique ? { critique: state.latestCritique } : {}),
              usageByNode: state.usageByNode,
              usage,
              promptHashes: state.promptHashes,
              checkpoint: outcome.checkpoint,
              timings: { modelMs: usage.latencyMs, otherMs: Math.max(0, finishedAt.getTime() - started.getTime() - usage.latencyMs) },
            };
            result = {
              id: task.id,
              status,
              dir,
              usageByNode: state.usageByNode,
              ...(stopReason ? { stopReason } : {}),
              ...(best?.selfScore !== undefined ? { bestSelfScore: best.selfScore } : {}),
            };
            if (status === "finished" && !best?.page) {
              const error = { code: "MODEL_REPLY", message: "no draft produced a page (see each draft's error in agent.json)" };
              record = { ...record, status: "failed", error };
              result = { ...result, status: "failed", error };
            }
          } catch (error) {
            logger.error(`task ${task.id}: agent failed: ${errorMessage(error)}`);
            const finishedAt = new Date();
            const failure = toErrorRecord(error);
            record = {
              ...base,
              status: "failed",
              finishedAt: finishedAt.toISOString(),
              durationMs: finishedAt.getTime() - started.getTime(),
              selfScoreByRound: [],
              drafts: [],
              usageByNode: {},
              usage: totalUsage({}),
              promptHashes: {},
              timings: { modelMs: 0, otherMs: finishedAt.getTime() - started.getTime() },
              error: failure,
            };
            result = { id: task.id, status: "failed", dir, error: failure };
          }
          await writeFileAtomic(files.record, `${redactString(JSON.stringify(record, null, 2))}\n`);
          if (record.status === "finished" && best?.page) writePageTo(dir, best.page, task.inputs.assetsDir);
          results.push(result);
        }),
      ),
    );
  } finally {
    if (!options.keepSharedResources) {
      await closeSharedBrowser();
      await shutdownOcr();
    }
  }
  return results.sort((a, b) => a.id - b.id);
}
