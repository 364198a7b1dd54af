/**
 * Evaluating one candidate page against one task (docs/protocol.md §3): replay the
 * true trajectory in the sandboxed host (src/replay), judge the assertions while the
 * replay waits out its settle times (judge-queue.ts), score and assemble the records
 * (task-records.ts), and write `eval.json` (+ `replay.json` with every grounding
 * and judge exchange, and `trace.zip`). A candidate that is missing or cannot be
 * replayed scores 0 with the reason recorded; only a broken evaluator (no browser,
 * unreadable task) throws.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright";
import type { Determinism } from "../browser/determinism.ts";
import type { HostTimeouts, PageIncident, PageMemoryRecord } from "../browser/host.ts";
import type { SettleRecord } from "../browser/settle.ts";
import { type ErrorRecord, IwrError } from "../errors.ts";
import { sweepAbandonedTemps, writeFileAtomicSync } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";
import { log } from "../log/logger.ts";
import { readImageText } from "../metrics/ocr.ts";
import { readingFor } from "../metrics/ocr-cost.ts";
import { type ProtocolProfile, profileRules } from "../protocol.ts";
import type { Grounder } from "../replay/grounding/types.ts";
import { type HostedPageRecord, type PageSlots, replayHostedCandidate } from "../replay/hosted-replay.ts";
import { type ReplayResult, type ReplayStep, recordedReplayActionOf } from "../replay/replay.ts";
import { candidateFiles, evalFileForMode } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";
import { candidateKey, type EvalInputKeys, settingsKey, taskKey } from "./eval-keys.ts";
import { type EvalRecord, type EvalSettings, writeEvalRecord } from "./eval-record.ts";
import type { AssertionJudge } from "./judge/types.ts";
import { type AssertionOutcome, AssertionQueue } from "./judge-queue.ts";
import type { PairingMode } from "./settings.ts";
import { scoreTaskRecords } from "./task-records.ts";
import { type VisualScorers, visualSettings } from "./visual-scorers.ts";

export type { PageSlots } from "../replay/hosted-replay.ts";
export type { AssertionOutcome } from "./judge-queue.ts";

const logger = log("evaluator");

/** The parts of an evaluator, made once per run and shared by every task. */
export interface Evaluator {
  /** The protocol profile every task is scored under (src/protocol.ts). */
  profile: ProtocolProfile;
  grounder: Grounder;
  judge: AssertionJudge;
  scorers: VisualScorers;
  /** Model names recorded in settings ("none" for the offline implementations). */
  groundingModel: string;
  judgeModel: string;
  /** Host limits; the defaults suit real runs (tests shorten them). */
  hostTimeouts?: Partial<HostTimeouts>;
  /** Each candidate page's memory limit in MiB (the host's default when absent). */
  pageMemoryMiB?: number;
  /** Save a Playwright trace of each replay as trace.zip (default true). */
  trace?: boolean;
  /**
   * Shared by concurrent evaluateTask calls: at most this many candidate pages opening
   * or replaying at once (a p-limit; a replayed page's trace save and close run after
   * its slot is freed). Without it every call opens its page at once.
   */
  pageSlots?: PageSlots;
  /** Judgements per assertion (default 1): the first is scored, the rest show the judge's own spread (eval.json assertions[].repeats). */
  judgeRepeats?: number;
  /** Ends what this evaluator started (OCR worker, DINO, its browsers); absent on a hand-built one. */
  close?: () => Promise<void>;
}

export interface EvaluateTaskOptions {
  task: Task;
  /** `<results>/<id>/<model-dir>/`: the page replayed. */
  candidateDir: string;
  /** Where eval.json, evalpoints, replay.json and the trace go (default: the candidate's folder). */
  recordDir?: string;
  /** The candidate's model name, as recorded in eval.json. */
  model: string;
  /** Pairing modes to score; the first one is written to eval.json, any other to eval.<mode>.json. */
  pairingModes: readonly PairingMode[];
  evaluator: Evaluator;
  /** Replace an existing eval.json (default false: a finished result is never rewritten). */
  replace?: boolean;
  /**
   * Reads the page after each evalpoint (calibration's DOM oracle of what a mutant's
   * steps deserve). It only reads: the scores are the same with or without it.
   */
  probe?: (index: number, page: Page) => Promise<void>;
  /**
   * The candidate is built from the task's own page (reference, blank, a mutant): it is
   * replayed in deterministic mode under either profile, since its score measures the
   * evaluator, not a model.
   */
  calibration?: boolean;
}

/** Whether a replay runs with the task's seed and clock start, as eval.json records it. */
export interface ReplayDeterminism {
  seeded: boolean;
  randomSeed?: number;
  clockStart?: string;
  /** Replayed under the stepped clock the task was recorded with (src/browser/stepped-clock.ts). */
  steppedClock?: boolean;
  reason: string;
}

/**
 * The deterministic-mode decision: the task's recorded seed is used in the corrected
 * profile and for calibration candidates; a model's page under the official profile is
 * replayed unseeded, as the harness replays it.
 */
export function replayDeterminism(task: Task, profile: ProtocolProfile, calibration: boolean): ReplayDeterminism {
  const recorded = task.truth.determinism;
  if (!recorded) return { seeded: false, reason: "the task line names no seed (recorded before deterministic mode)" };
  if (!calibration && profileRules(profile).modelPageDeterminism === "unseeded") {
    return { seeded: false, reason: "official profile: a model's page is replayed unseeded, as the harness does" };
  }
  // The stepped clock replaces the fixed waits by clock steps: only a profile that waits for rest uses it; the official one keeps the harness's waits.
  const stepped = recorded.steppedClock !== undefined && profileRules(profile).screenshotSettle === "at-rest";
  const clock = stepped ? "seed and stepped clock" : "seed and clock start";
  return {
    seeded: true,
    randomSeed: recorded.randomSeed,
    clockStart: new Date(recorded.clockStartMs).toISOString(),
    ...(stepped ? { steppedClock: true } : {}),
    reason: calibration ? `calibration candidate: replayed with the task's ${clock}` : `${profile} profile: replayed with the task's ${clock}`,
  };
}

/** The task's determinism as the host installs it: without its stepped clock when the replay does not use it. */
function hostDeterminism(recorded: Determinism, decision: ReplayDeterminism): Determinism {
  if (decision.steppedClock || !recorded.steppedClock) return recorded;
  const { steppedClock: _unused, ...shifted } = recorded;
  return shifted;
}

/** replay.json: what the replay did, step by step, with every model exchange kept. */
export interface ReplayRecord {
  version: 1;
  taskId: number;
  model: string;
  url?: string;
  loadError?: ErrorRecord;
  tornDown?: ErrorRecord;
  grounding: string;
  judge: string;
  executed: number;
  successStep: number;
  stopReason?: ErrorRecord;
  /** The wait before evalpoint 0 when the profile waits for the page to be at rest (each step's own wait is in its `settle`). */
  initialSettle?: SettleRecord;
  steps: ReplayStep[];
  assertions: AssertionOutcome[];
  incidents: PageIncident[];
  incidentCounts?: Record<string, number>;
  /** The page's memory limit and the most its renderer held. */
  memory?: PageMemoryRecord;
  /**
   * Where the time went: waiting for a free page slot (other tasks' replays), opening the
   * page, the replay, waiting for the judge after it, closing (trace save + context close,
   * which runs alongside the judge wait and the scoring), scoring.
   */
  timings: { slotWaitMs: number; openMs: number; replayMs: number; judgeWaitMs: number; closeMs: number; scoreMs: number };
  wallMs: number;
}

export interface TaskEvaluation {
  taskId: number;
  /** One record per requested pairing mode, in the order asked. */
  records: Array<{ mode: PairingMode; record: EvalRecord }>;
  replay: ReplayRecord;
}

/** The settings this evaluator scores under (every key but the pairing mode, which each record adds). */
export function evaluatorSettings(evaluator: Evaluator): Omit<EvalSettings, "pairingMode" | "source"> {
  const settings = {
    assertionJudgeKind: evaluator.judge.kind === "llm" ? "model" : evaluator.judge.kind,
    // The offline judge has no model; its rules' version stands in its place (records of other rules are not averaged with these).
    assertionJudgeModel: evaluator.judge.rulesVersion ? `offline-rules-${evaluator.judge.rulesVersion}` : evaluator.judgeModel,
    groundingKind: evaluator.grounder.kind === "llm" ? "model" : evaluator.grounder.kind,
    groundingModel: evaluator.groundingModel,
    ...visualSettings(evaluator.scorers),
    protocol: evaluator.profile,
  };
  settings.promptHashes = { ...settings.promptHashes, ...evaluator.grounder.promptHashes, ...evaluator.judge.promptHashes };
  return settings;
}

/** The hashes an eval.json of this task, candidate and evaluator would carry in `mode`. */
export async function evaluationInputs(task: Task, candidateDir: string, evaluator: Evaluator, mode: PairingMode, calibration = false): Promise<EvalInputKeys> {
  const [candidate, taskHash] = await Promise.all([candidateKey(candidateDir), taskKey(task)]);
  let settings = settingsKey({ ...evaluatorSettings(evaluator), pairingMode: mode, source: "iwr" });
  // Judge repeats change what a record holds, not its scores: keyed only when asked for, so records made without them stay valid.
  const repeats = evaluator.judgeRepeats ?? 1;
  if (repeats > 1) settings = sha256Hex(`${settings}:judge-repeats=${repeats}`);
  // Likewise a seeded replay: keyed only when seeded, so unseeded records made before deterministic mode stay valid.
  const determinism = replayDeterminism(task, evaluator.profile, calibration);
  if (determinism.seeded) {
    const clock = `${determinism.clockStart}${determinism.steppedClock ? ":stepped" : ""}`;
    settings = sha256Hex(`${settings}:seed=${determinism.randomSeed}:clock=${clock}`);
  }
  return { candidate, task: taskHash, settings };
}

interface ReplayedAndJudged {
  replay: ReplayResult;
  assertions: AssertionOutcome[];
  /** Complete once the page closed (trace, context, staged copy). */
  closed: Promise<HostedPageRecord & { closeMs: number }>;
  timings: Omit<ReplayRecord["timings"], "closeMs" | "scoreMs">;
}

/** What the OCR metric's readings are for, as ocr-cost.ts tallies them: both screens of each pair, read as they come. */
const OCR_PURPOSES = Object.freeze({
  checkpoints: "OCR metric: the task's checkpoints",
  screenshots: "OCR metric: the candidate's screenshots",
});

/**
 * Reference checkpoints are read by OCR while the replay waits (the text cache keeps
 * them), one as each evalpoint is taken: read all at once they would take the CPUs from
 * the page while it opens. `rest()` reads any the replay did not reach. `stop()` ends the
 * prefetching with the task: a checkpoint whose file arrives later is not read. Why: these
 * readings are not awaited, and one asked for after the command shut OCR down (a page that
 * never loaded ends its task at once, its last task's checkpoints still being fetched)
 * started a new pool of OCR workers that nobody closed, and held `iwr evaluate` open for
 * good after its report.
 */
function checkpointPrefetcher(checkpointPaths: readonly string[]): { at(position: number): void; rest(): void; stop(): void } {
  const started = new Set<number>();
  let stopped = false;
  const at = (position: number): void => {
    const checkpoint = checkpointPaths[position];
    if (stopped || checkpoint === undefined || started.has(position)) return;
    started.add(position);
    void fsp
      .readFile(checkpoint)
      .then((png) => (stopped ? undefined : readingFor(OCR_PURPOSES.checkpoints, () => readImageText(png))))
      .catch(() => undefined);
  };
  return {
    at,
    rest: () => checkpointPaths.forEach((_, position) => void at(position)),
    stop: () => {
      stopped = true;
    },
  };
}

async function replayAndJudge(options: EvaluateTaskOptions, determinism: ReplayDeterminism): Promise<ReplayedAndJudged> {
  const { task, candidateDir, evaluator } = options;
  const files = candidateFiles(options.recordDir ?? candidateDir);
  const page = candidateFiles(candidateDir).page;
  if (!fs.existsSync(page)) {
    const stopReason = { code: "CANDIDATE_MISSING", message: `no candidate page at ${page}` };
    const closed = Promise.resolve({ incidents: [], closeMs: 0 });
    return {
      replay: { executed: 0, steps: [], evalpoints: [], error: stopReason },
      assertions: [],
      closed,
      timings: { slotWaitMs: 0, openMs: 0, replayMs: 0, judgeWaitMs: 0 },
    };
  }
  // The offline judge reads the page's screen text and, when the task recorded them, the true page's states around each action.
  const offline = evaluator.judge.kind === "heuristic";
  const queue = new AssertionQueue(
    evaluator.judge,
    task.truth.actions,
    evaluator.judgeRepeats ?? 1,
    profileRules(evaluator.profile).blankAssertion,
    offline ? task.truth.actionStatePaths : undefined,
  );
  queue.prepareJudge();
  const prefetch = checkpointPrefetcher(task.truth.checkpointPaths);
  let hosted: Awaited<ReturnType<typeof replayHostedCandidate>>;
  try {
    hosted = await replayHostedCandidate({
      candidateDir,
      assetsDir: task.inputs.assetsDir,
      confineAssetsTo: task.setDir,
      resolution: task.inputs.resolution,
      actions: task.truth.actions.map(recordedReplayActionOf),
      grounder: evaluator.grounder,
      screenshotsDir: files.evalpoints,
      onScreenshot: (index, png, text) => {
        void readingFor(OCR_PURPOSES.screenshots, () => readImageText(png)).catch(() => undefined);
        prefetch.at(index);
        queue.onEvalpoint(index, png, text);
      },
      ...(offline ? { readScreenText: true } : {}),
      ...(evaluator.trace === false ? {} : { tracePath: files.trace }),
      ...(evaluator.hostTimeouts ? { hostTimeouts: evaluator.hostTimeouts } : {}),
      ...(evaluator.pageMemoryMiB ? { memoryLimitMiB: evaluator.pageMemoryMiB } : {}),
      ...(evaluator.pageSlots ? { pageSlots: evaluator.pageSlots } : {}),
      ...(options.probe ? { probe: options.probe } : {}),
      style: profileRules(evaluator.profile),
      scrollbars: profileRules(evaluator.profile).scrollbars,
      ...(determinism.seeded && task.truth.determinism ? { determinism: hostDeterminism(task.truth.determinism, determinism) } : {}),
    });
  } catch (error) {
    // The task fails here: nothing is left to read ahead for it, and nothing it started reading outlives it.
    prefetch.stop();
    await queue.settled().catch(() => undefined);
    throw error;
  } finally {
    prefetch.rest();
  }
  const judgeStarted = Date.now();
  try {
    const assertions = await queue.settled();
    return { replay: hosted.replay, assertions, closed: hosted.closed, timings: { ...hosted.timings, judgeWaitMs: Date.now() - judgeStarted } };
  } finally {
    prefetch.stop();
  }
}

export async function evaluateTask(options: EvaluateTaskOptions): Promise<TaskEvaluation> {
  const { task, candidateDir, evaluator } = options;
  if (options.pairingModes.length === 0) throw new IwrError("EVALUATOR", "evaluateTask: pairingModes: expected at least one mode");
  const recordDir = options.recordDir ?? candidateDir;
  const files = candidateFiles(recordDir);
  if (!options.replace && fs.existsSync(files.eval)) {
    throw new IwrError("IO", `${files.eval} already exists: a finished result is never rewritten (re-evaluate with --force)`, { file: files.eval });
  }
  const started = Date.now();
  await fsp.mkdir(recordDir, { recursive: true });
  // What a killed run left here (staged page copies, half-written evalpoints and traces).
  sweepAbandonedTemps(candidateDir);
  if (recordDir !== candidateDir) sweepAbandonedTemps(recordDir);
  const calibration = options.calibration ?? false;
  const determinism = replayDeterminism(task, evaluator.profile, calibration);
  const inputs = await Promise.all(options.pairingModes.map((mode) => evaluationInputs(task, candidateDir, evaluator, mode, calibration)));
  const { replay, assertions, closed, timings } = await replayAndJudge(options, determinism);
  const scoringStarted = Date.now();
  const actions = task.truth.actions;
  const { records, successStep, stopReason } = await scoreTaskRecords({
    task,
    model: options.model,
    replay,
    assertions,
    evalpointPaths: replay.evalpoints.map((_, index) => files.evalpoint(index)),
    pairingModes: options.pairingModes,
    profile: evaluator.profile,
    scorers: evaluator.scorers,
    settings: evaluatorSettings(evaluator),
    inputs,
  });
  const scoreMs = Date.now() - scoringStarted;
  const { closeMs, ...page } = await closed;
  const network = { blockedRequests: page.incidentCounts?.["blocked-request"] ?? 0 };
  // Known only once the page closed; writeEvalRecord validates the whole record.
  for (const entry of records) entry.record = { ...entry.record, network, determinism };
  const replayRecord: ReplayRecord = {
    version: 1,
    taskId: task.id,
    model: options.model,
    grounding: evaluator.grounder.kind,
    judge: evaluator.judge.kind,
    ...page,
    executed: replay.executed,
    successStep,
    ...(stopReason ? { stopReason } : {}),
    ...(replay.initialSettle ? { initialSettle: replay.initialSettle } : {}),
    steps: replay.steps,
    assertions,
    timings: { ...timings, closeMs, scoreMs },
    wallMs: Date.now() - started,
  };
  writeFileAtomicSync(files.replay, `${JSON.stringify(replayRecord, null, 2)}\n`);
  const [primary, ...others] = records;
  if (primary) writeEvalRecord(files.eval, primary.record, { replace: options.replace ?? false });
  // The other modes beside it, so a calibration's every number has its file.
  for (const other of others) writeEvalRecord(path.join(recordDir, evalFileForMode(other.mode)), other.record, { replace: true });
  logger.debug(
    `task ${task.id}: executed ${replay.executed}/${actions.length}, success_step ${successStep}, ` +
      `final ${primary?.record.scores.final.toFixed(4)} in ${replayRecord.wallMs} ms`,
  );
  return { taskId: task.id, records, replay: replayRecord };
}
