/**
 * Evaluating one candidate page against one task (IWR-PROTOCOL.md §3): replay the
 * true trajectory in the sandboxed host, judge the assertions (while the replay waits
 * out its settle times), pair evalpoints with checkpoints, score them, aggregate, and
 * write `eval.json` (+ `replay.json` with every grounding and judge exchange, and
 * `trace.zip`). A candidate that is missing or cannot be replayed scores 0 with the
 * reason recorded; only a broken evaluator (no browser, unreadable task) throws.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { IwrError, toErrorRecord, type ErrorRecord } from "../errors.ts";
import { log } from "../log/logger.ts";
import { openSandboxedPage, type HostTimeouts, type PageIncident } from "../browser/host.ts";
import type { Task } from "../tasks/schema.ts";
import { readImageText } from "./metrics/ocr.ts";
import { scoreVisualPairs, visualSettings, type VisualScorers } from "./metrics/index.ts";
import { pairEvalpoints } from "./pairing.ts";
import { buildEvalRecord, writeEvalRecord, type EvalRecord } from "./eval-record.ts";
import type { PairingMode } from "./settings.ts";
import { replayTrajectory, type ReplayResult, type ReplayStep } from "./replay.ts";
import type { Grounder } from "./grounding/types.ts";
import type { AssertionJudge, AssertionVerdict } from "./judge/types.ts";
import { CANDIDATE_FILE, EVALPOINTS_DIR, EVAL_FILE, REPLAY_FILE, TRACE_FILE, candidateMounts, stageCandidate } from "./candidate-serving.ts";

export { CANDIDATE_FILE, EVALPOINTS_DIR, EVAL_FILE, REPLAY_FILE, TRACE_FILE, assetsUrlPath, candidateMounts, stageCandidate } from "./candidate-serving.ts";

const logger = log("evaluator");

/** The parts of an evaluator, made once per run and shared by every task. */
export interface Evaluator {
  grounder: Grounder;
  judge: AssertionJudge;
  scorers: VisualScorers;
  /** Model names recorded in settings ("none" for the offline implementations). */
  groundingModel: string;
  judgeModel: string;
  /** Host limits; the defaults suit real runs (tests shorten them). */
  hostTimeouts?: Partial<HostTimeouts>;
  /** Save a Playwright trace of each replay as trace.zip (default true). */
  trace?: boolean;
  /**
   * Shared by concurrent evaluateTask calls: at most this many candidate pages opening
   * or replaying at once (a p-limit; a replayed page's trace save and close run after
   * its slot is freed). Without it every call opens its page at once.
   */
  pageSlots?: PageSlots;
}

/** Runs `open` when a page slot is free, holding it until `open` settles. */
export type PageSlots = <T>(open: () => Promise<T>) => Promise<T>;

export interface EvaluateTaskOptions {
  task: Task;
  /** `<results>/<id>/<model-dir>/` */
  candidateDir: string;
  /** The candidate's model name, as recorded in eval.json. */
  model: string;
  /** Pairing modes to score; the first one is written to eval.json. */
  pairingModes: readonly PairingMode[];
  evaluator: Evaluator;
  /** Replace an existing eval.json (default false: a finished result is never rewritten). */
  replace?: boolean;
}

export interface AssertionOutcome {
  actionIndex: number;
  assertion: string;
  verdict: AssertionVerdict;
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
  steps: ReplayStep[];
  assertions: AssertionOutcome[];
  incidents: PageIncident[];
  incidentCounts?: Record<string, number>;
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

function successStepOf(executed: number, assertions: readonly AssertionOutcome[]): number {
  const firstNo = assertions
    .filter((outcome) => outcome.actionIndex < executed && outcome.verdict.result === "No")
    .reduce((lowest, outcome) => Math.min(lowest, outcome.actionIndex), executed);
  return firstNo;
}

function stopReasonOf(replay: ReplayResult, actionsCount: number): ErrorRecord | undefined {
  if (replay.stoppedAt === undefined && !replay.error) return undefined;
  const step = replay.stoppedAt !== undefined ? replay.steps[replay.stoppedAt] : undefined;
  if (step) {
    return { code: "ACTION_FAILED", message: `action ${step.index} (${step.type}): ${step.reason ?? "failed"}`, details: { actionIndex: step.index, of: actionsCount } };
  }
  return replay.error;
}

interface ReplayedAndJudged {
  replay: ReplayResult;
  assertions: AssertionOutcome[];
  /** The page's closing (trace, context, staged copy); the record is complete once it settles. */
  closed: Promise<Omit<ReplayRecord, "wallMs" | "successStep" | "timings">>;
  timings: Omit<ReplayRecord["timings"], "scoreMs">;
}

/**
 * Replays (in a page slot) and judges; no scoring. The evalpoints end up in
 * `<candidateDir>/evalpoints/`. The page closes in the background.
 */
async function replayAndJudge(options: EvaluateTaskOptions): Promise<ReplayedAndJudged> {
  const timings = { slotWaitMs: 0, openMs: 0, replayMs: 0, judgeWaitMs: 0, closeMs: 0 };
  let mark = Date.now();
  const lap = (): number => {
    const now = Date.now();
    const elapsed = now - mark;
    mark = now;
    return elapsed;
  };
  const { task, candidateDir, evaluator } = options;
  const actions = task.truth.actions;
  const base = { version: 1 as const, taskId: task.id, model: options.model, grounding: evaluator.grounder.kind, judge: evaluator.judge.kind };
  const empty: ReplayResult = { executed: 0, steps: [], evalpoints: [] };
  const candidateFile = path.join(candidateDir, CANDIDATE_FILE);
  if (!fs.existsSync(candidateFile)) {
    const stopReason = { code: "CANDIDATE_MISSING", message: `no candidate page at ${candidateFile}` };
    const record = { ...base, executed: 0, stopReason, steps: [], assertions: [], incidents: [] };
    return { replay: { ...empty, error: stopReason }, assertions: [], closed: Promise.resolve(record), timings };
  }

  // Reference checkpoints are read by OCR while the replay waits (the text cache keeps them),
  // one as each evalpoint is taken: read all at once they would take the CPUs from the
  // page while it opens. Any the replay did not reach are read as it ends.
  const prefetched = new Set<number>();
  const prefetchCheckpoint = (position: number): void => {
    const checkpoint = task.truth.checkpointPaths[position];
    if (checkpoint === undefined || prefetched.has(position)) return;
    prefetched.add(position);
    void fsp.readFile(checkpoint).then((png) => readImageText(png, { reference: true })).catch(() => undefined);
  };
  const stagingDir = path.join(candidateDir, `.${EVALPOINTS_DIR}.${process.pid}.${Date.now()}.tmp`);
  const judged: Array<Promise<AssertionOutcome>> = [];
  const shots: Buffer[] = [];
  const onEvalpoint = (index: number, png: Buffer): void => {
    shots[index] = png;
    void readImageText(png).catch(() => undefined);
    prefetchCheckpoint(index);
    const action = actions[index - 1];
    const before = shots[index - 1];
    if (index === 0 || !action || !before || !action.logical_assertion.trim()) return;
    const assertion = action.logical_assertion;
    judged.push(
      evaluator.judge
        .judge({ actionIndex: index - 1, actionType: action.type, actionDescription: action.parameters.description, assertion, before, after: png })
        // Settled here, at once: a judge that throws is that step's recorded failure, never an unhandled rejection.
        .catch((error: unknown): AssertionVerdict => ({
          result: "No",
          failure: { kind: "error", message: toErrorRecord(error).message },
          replies: [],
          attempts: 1,
          latencyMs: 0,
        }))
        .then((verdict) => ({ actionIndex: index - 1, assertion, verdict })),
    );
  };
  // The page slot is held from opening the page to the end of its replay: judging, scoring
  // and closing need no slot, so the next task's replay runs while they finish.
  const inPageSlot = evaluator.pageSlots ?? (<T>(work: () => Promise<T>) => work());
  const { sandbox, replay, closing } = await inPageSlot(async () => {
    timings.slotWaitMs = lap();
    const servedDir = await stageCandidate(candidateDir);
    const sandbox = await openSandboxedPage({
      mounts: candidateMounts(candidateDir, task.inputs.assetsDir, servedDir),
      entry: CANDIDATE_FILE,
      resolution: task.inputs.resolution,
      ...(evaluator.trace === false ? {} : { tracePath: path.join(candidateDir, TRACE_FILE) }),
      ...(evaluator.hostTimeouts ? { timeouts: evaluator.hostTimeouts } : {}),
    }).catch(async (error: unknown) => {
      await fsp.rm(servedDir, { recursive: true, force: true });
      throw error;
    });
    timings.openMs = lap();
    let replay: ReplayResult = empty;
    let closing: Promise<void> = Promise.resolve();
    try {
      if (sandbox.loadError) {
        replay = { ...empty, error: sandbox.loadError };
      } else {
        const ownPrefix = `${sandbox.server.origin}/`;
        replay = await replayTrajectory({
          surface: {
            page: sandbox.page,
            screenshot: () => sandbox.screenshot(),
            withTimeout: (label, ms, run) => sandbox.withTimeout(label, ms, run),
            leftTo: () => {
              const url = sandbox.page.url();
              return url.startsWith(ownPrefix) ? undefined : url;
            },
          },
          actions,
          grounder: evaluator.grounder,
          evalpointsDir: stagingDir,
          onEvalpoint,
        });
      }
      timings.replayMs = lap();
    } finally {
      task.truth.checkpointPaths.forEach((_, position) => prefetchCheckpoint(position));
      // Saving the trace and closing the context need nothing from the judge or the scoring:
      // they run while those do, and the record waits for them at the end.
      const closeStarted = Date.now();
      closing = sandbox.close().then(async () => {
        await fsp.rm(servedDir, { recursive: true, force: true });
        timings.closeMs = Date.now() - closeStarted;
      });
      // Observed here too, so a replay that throws leaves no unhandled rejection behind.
      closing.catch(() => undefined);
    }
    return { sandbox, replay, closing };
  });
  const assertions = (await Promise.all(judged)).sort((a, b) => a.actionIndex - b.actionIndex);
  timings.judgeWaitMs = lap();
  await publishEvalpoints(candidateDir, stagingDir);
  const stopReason = stopReasonOf(replay, actions.length);
  const finished = replay;
  const closed = closing.then(() => ({
    ...base,
    url: sandbox.url,
    ...(sandbox.loadError ? { loadError: sandbox.loadError } : {}),
    ...(sandbox.tornDown ? { tornDown: sandbox.tornDown } : {}),
    executed: finished.executed,
    ...(stopReason ? { stopReason } : {}),
    steps: finished.steps,
    assertions,
    incidents: [...sandbox.incidents],
    incidentCounts: { ...sandbox.incidentCounts },
  }));
  // Awaited by the caller after scoring; observed now so a failure before then is not "unhandled".
  closed.catch(() => undefined);
  return { replay: finished, assertions, closed, timings };
}

/** Swaps the new evalpoints in for any earlier ones (a shorter replay must not leave stale files behind). */
async function publishEvalpoints(candidateDir: string, stagingDir: string): Promise<void> {
  const finalDir = path.join(candidateDir, EVALPOINTS_DIR);
  await fsp.mkdir(stagingDir, { recursive: true });
  await fsp.rm(finalDir, { recursive: true, force: true });
  await fsp.rename(stagingDir, finalDir);
}

function assertionEntries(assertions: readonly AssertionOutcome[]): EvalRecord["assertions"] {
  return assertions.map(({ actionIndex, assertion, verdict }) => {
    const think = verdict.failure ? `judge failed (${verdict.failure.kind}): ${verdict.failure.message}` : verdict.think;
    const reply = verdict.replies.length > 0 ? verdict.replies.join("\n---\n") : undefined;
    return { actionIndex, assertion, result: verdict.result, ...(think !== undefined ? { think } : {}), ...(reply !== undefined ? { reply } : {}) };
  });
}

export async function evaluateTask(options: EvaluateTaskOptions): Promise<TaskEvaluation> {
  const { task, candidateDir, evaluator } = options;
  if (options.pairingModes.length === 0) throw new IwrError("EVALUATOR", "evaluateTask: pairingModes: expected at least one mode");
  const evalFile = path.join(candidateDir, EVAL_FILE);
  if (!options.replace && fs.existsSync(evalFile)) {
    throw new IwrError("IO", `${evalFile} already exists: a finished result is never rewritten (re-evaluate with --force)`, { file: evalFile });
  }
  const started = Date.now();
  await fsp.mkdir(candidateDir, { recursive: true });
  const { replay, assertions, closed, timings } = await replayAndJudge(options);
  const scoringStarted = Date.now();
  const actions = task.truth.actions;
  const successStep = successStepOf(replay.executed, assertions);
  const evalpointPaths = replay.evalpoints.map((_, index) => path.join(candidateDir, EVALPOINTS_DIR, `${index}.png`));
  const settings = {
    assertionJudgeKind: evaluator.judge.kind === "llm" ? "model" : evaluator.judge.kind,
    assertionJudgeModel: evaluator.judgeModel,
    groundingKind: evaluator.grounder.kind === "llm" ? "model" : evaluator.grounder.kind,
    groundingModel: evaluator.groundingModel,
    ...visualSettings(evaluator.scorers),
  };
  settings.promptHashes = { ...settings.promptHashes, ...evaluator.grounder.promptHashes, ...evaluator.judge.promptHashes };

  const records: TaskEvaluation["records"] = [];
  for (const mode of options.pairingModes) {
    const pairing = pairEvalpoints({
      flags: actions.map((action) => action.visual_evaluation_flag),
      successStep,
      evalpointPaths,
      checkpointPaths: task.truth.checkpointPaths,
      mode,
    });
    const steps = await scoreVisualPairs(pairing.pairs, evaluator.scorers);
    const stopReason = stopReasonOf(replay, actions.length);
    records.push({
      mode,
      record: buildEvalRecord({
        taskId: task.id,
        model: options.model,
        totalSteps: actions.length,
        executedSteps: replay.executed,
        successStep,
        ...(stopReason ? { stopReason } : {}),
        assertions: assertionEntries(assertions),
        steps,
        pairing,
        settings,
      }),
    });
  }
  const scoreMs = Date.now() - scoringStarted;
  const record = await closed;
  const replayRecord: ReplayRecord = { ...record, successStep, timings: { ...timings, scoreMs }, wallMs: Date.now() - started };
  writeFileAtomicSync(path.join(candidateDir, REPLAY_FILE), `${JSON.stringify(replayRecord, null, 2)}\n`);
  const primary = records[0];
  if (primary) writeEvalRecord(evalFile, primary.record, { replace: options.replace ?? false });
  logger.debug(`task ${task.id}: executed ${replay.executed}/${actions.length}, success_step ${successStep}, final ${primary?.record.scores.final.toFixed(4)} in ${replayRecord.wallMs} ms`);
  return { taskId: task.id, records, replay: replayRecord };
}
