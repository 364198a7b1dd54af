/**
 * Evaluating a results folder: every task of a task file whose candidate lives at
 * `<results>/<id>/<model-dir>/index.html`, `workers` pages open at a time in this one
 * process (one Chromium, a context per task; OCR and DINO loaded once; see
 * task-pipeline.ts for how replays overlap judging and scoring), then the
 * model's metrics report. A task whose evaluation breaks is recorded and the run
 * goes on; a finished eval.json is skipped unless `force` is set.
 */
import fs from "node:fs";
import { defaultPageMemoryLimitMiB, type HostTimeouts } from "../browser/host.ts";
import { closeSharedBrowser } from "../browser/launch.ts";
import { type ErrorRecord, errorMessage, IwrError, toErrorRecord } from "../errors.ts";
import { sameInputs } from "../evaluator/eval-keys.ts";
import { readEvalRecord } from "../evaluator/eval-record.ts";
import { type Evaluator, evaluateTask, evaluationInputs, type TaskEvaluation } from "../evaluator/evaluate-task.ts";
import { createAssertionJudge, type JudgeKind } from "../evaluator/judge/index.ts";
import { createVisualScorers, shutdownVisualScorers, type VisualScorers } from "../evaluator/metrics/index.ts";
import { createClientJudge } from "../evaluator/metrics/judge-call.ts";
import { ocrPoolSizeFor, setOcrPoolSize } from "../evaluator/metrics/ocr.ts";
import { rescore } from "../evaluator/rescore.ts";
import type { PairingMode } from "../evaluator/settings.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import { createModelClient, loadModelSpec, type ModelClient, type ModelSpec, openResponseCache, preflightModel } from "../models/index.ts";
import { type ProtocolProfile, profileRules } from "../protocol.ts";
import { createGrounder, type GrounderKind } from "../replay/grounding/index.ts";
import { candidateDirFor, candidateFiles, modelFolderName } from "../results/layout.ts";
import { loadTasks } from "../tasks/loader.ts";
import type { Task } from "../tasks/schema.ts";
import { createPageSlots, runPipelined, trajectoryLength } from "./task-pipeline.ts";

const logger = log("evaluate");

export interface EvaluatorChoice {
  /** The protocol profile (default corrected; the CLI defaults to official). */
  profile?: ProtocolProfile;
  judge: JudgeKind;
  grounding: GrounderKind;
  /** The model behind the `llm` judges (assertion, MLLM visual) and, unless groundingModel is given, the grounding. Default gpt-4o, the harness's. */
  judgeModel?: string;
  /** The grounding's model when it differs from the judges' (the harness's OPENAI_MODEL_NAME beside MODEL_FOR_EVAL). */
  groundingModel?: string;
  baseURL?: string;
  /** Model response cache folder; responses are cached read-write there when given. */
  cacheDir?: string;
  hostTimeouts?: Partial<HostTimeouts>;
  /** Save trace.zip beside each replay (default true). */
  trace?: boolean;
  /** An already-built client for the `llm` parts (tests, or callers sharing one). */
  client?: ModelClient;
  /** Candidate pages replayed at once in this process (default 1); the OCR pool is sized for it. */
  workers?: number;
  /** Each page's memory limit in MiB (default: defaultPageMemoryLimitMiB(workers), IWR_PAGE_MEMORY_MB). */
  pageMemoryMiB?: number;
  /** Judgements per assertion (default 1; the first is scored, the rest show the judge's spread). */
  judgeRepeats?: number;
  /** A folder whose prompt templates replace ours by name (e.g. the harness's own texts); their hashes are recorded. */
  promptsDir?: string;
}

export interface EvaluateRunOptions extends EvaluatorChoice {
  dataPath: string;
  resultDir: string;
  /** The candidates' model name; its folder is modelDirName(model), refused when unsafe. */
  model: string;
  /** Overrides the profile's pairing (recorded in eval.json's settings beside the profile). */
  pairing?: PairingMode;
  ids?: readonly number[];
  /** Re-evaluate tasks that already have an eval.json. */
  force?: boolean;
  /** Called after each task (progress display). */
  onTask?: (outcome: TaskRunOutcome) => void;
}

export interface TaskRunOutcome {
  taskId: number;
  /** `skipped`: a finished eval.json scored this very page, task and settings already. */
  status: "evaluated" | "skipped" | "failed";
  /** Where its records are. */
  candidateDir: string;
  final?: number;
  ifs?: number;
  error?: ErrorRecord;
  wallMs: number;
}

export interface EvaluateRunSummary {
  tasks: TaskRunOutcome[];
  reportPath?: string;
  wallMs: number;
}

export const DEFAULT_JUDGE_MODEL = "gpt-4o";

/** The model clients of the evaluator's parts; one client for all unless the profile gives each its own limit. */
interface EvaluatorClients {
  grounding?: ModelClient;
  /** The grounding's vision fallback (the harness sends it without a temperature). */
  groundingVision?: ModelClient;
  assertion?: ModelClient;
  visual?: ModelClient;
}

async function evaluatorClients(choice: EvaluatorChoice, rules: ReturnType<typeof profileRules>): Promise<EvaluatorClients> {
  const needsJudge = choice.judge === "llm";
  const needsGrounding = choice.grounding === "llm";
  if (!needsJudge && !needsGrounding) return {};
  // A client handed in (tests, callers sharing one) serves every part as it is.
  if (choice.client) return { grounding: choice.client, groundingVision: choice.client, assertion: choice.client, visual: choice.client };
  const cache = choice.cacheDir ? { cache: openResponseCache(choice.cacheDir, "read-write") } : {};
  const overrides = choice.baseURL ? { baseURL: choice.baseURL } : {};
  const judgeSpec = loadModelSpec(choice.judgeModel ?? DEFAULT_JUDGE_MODEL, overrides);
  // The harness grounds with OPENAI_MODEL_NAME and judges with MODEL_FOR_EVAL: two models when asked.
  const groundingSpec = choice.groundingModel ? loadModelSpec(choice.groundingModel, overrides) : judgeSpec;
  for (const spec of new Set([needsJudge ? judgeSpec : undefined, needsGrounding ? groundingSpec : undefined])) if (spec) await preflightModel(spec);
  const timeouts = rules.modelTimeoutsMs;
  const withLimit = (spec: ModelSpec, timeoutMs: number | undefined, extra: Partial<ModelSpec> = {}) =>
    createModelClient({ ...spec, ...(timeoutMs ? { timeoutMs } : {}), ...extra }, cache);
  return {
    ...(needsGrounding
      ? {
          grounding: withLimit(groundingSpec, timeouts?.grounding),
          groundingVision: withLimit(groundingSpec, timeouts?.grounding, rules.grounding === "harness" ? { temperature: null } : {}),
        }
      : {}),
    ...(needsJudge
      ? {
          assertion: withLimit(judgeSpec, timeouts?.assertion, rules.assertionMaxTokens ? { maxTokens: rules.assertionMaxTokens } : {}),
          visual: withLimit(judgeSpec, timeouts?.visual),
        }
      : {}),
  };
}

/** Builds the evaluator once per process: model clients (checked before any work), judges, OCR/DINO. */
export async function createEvaluator(choice: EvaluatorChoice): Promise<Evaluator> {
  const profile = choice.profile ?? "corrected";
  const rules = profileRules(profile);
  const clients = await evaluatorClients(choice, rules);
  setOcrPoolSize(ocrPoolSizeFor(choice.workers ?? 1));
  const promptsDir = choice.promptsDir ? { promptsDir: choice.promptsDir } : {};
  const scorers: VisualScorers = await createVisualScorers(
    clients.visual ? { judge: createClientJudge(clients.visual, { promptName: rules.prompts.visual, ...promptsDir }) } : {},
  );
  const grounderOptions = {
    ...(clients.grounding ? { client: clients.grounding } : {}),
    ...(clients.groundingVision ? { visionClient: clients.groundingVision } : {}),
    giveTypedText: rules.typeTextToModel === "given",
    parse: rules.grounding,
    ...promptsDir,
  };
  const hostTimeouts = { navigationMs: rules.navigationTimeoutMs, ...choice.hostTimeouts };
  return {
    grounder: createGrounder(choice.grounding, grounderOptions),
    profile,
    judge: createAssertionJudge(choice.judge, {
      ...(clients.assertion ? { client: clients.assertion } : {}),
      maxAttempts: rules.judgeAttempts,
      parse: rules.judgeParse,
      promptName: rules.prompts.assertion,
      ...promptsDir,
    }),
    scorers,
    groundingModel: clients.grounding?.spec.name ?? "none",
    judgeModel: clients.assertion?.spec.name ?? "none",
    hostTimeouts,
    ...(choice.trace === false ? { trace: false } : {}),
    pageMemoryMiB: choice.pageMemoryMiB ?? defaultPageMemoryLimitMiB(choice.workers ?? 1),
    pageSlots: createPageSlots(choice.workers ?? 1),
    ...(choice.judgeRepeats && choice.judgeRepeats > 1 ? { judgeRepeats: choice.judgeRepeats } : {}),
    // The OCR worker pool and the browsers are the process's (one of each per process); closing ends them.
    close: closeEvaluator,
  };
}

/** Ends what createEvaluator started (OCR worker, DINO) and the shared browsers: every evaluator's, for callers holding none (tests, benches). */
export async function closeEvaluator(): Promise<void> {
  await shutdownVisualScorers();
  await closeSharedBrowser();
}

function selectTasks(tasks: readonly Task[], ids: readonly number[] | undefined, dataPath: string): Task[] {
  if (!ids || ids.length === 0) return [...tasks];
  const known = new Set(tasks.map((task) => task.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new IwrError("CONFIG_INVALID", `--ids: task(s) ${unknown.join(", ")} are not in ${dataPath} (it has ${[...known].join(", ")})`);
  }
  const wanted = new Set(ids);
  return tasks.filter((task) => wanted.has(task.id));
}

/** Whether the finished eval.json scored exactly these inputs (false when it is absent, unreadable or stale). */
function unchangedRecord(file: string, current: Awaited<ReturnType<typeof evaluationInputs>>): boolean {
  if (!fs.existsSync(file)) return false;
  try {
    return sameInputs(readEvalRecord(file).inputs, current);
  } catch (error) {
    logger.warn(`${file}: ${errorMessage(error)}; the task is evaluated again`);
    return false;
  }
}

/** A page generated under one profile and scored under the other is legitimate, but should not go unnoticed. */
function warnOnProtocolMix(generationFile: string, profile: ProtocolProfile, taskId: number): void {
  if (!fs.existsSync(generationFile)) return;
  try {
    const generated = (JSON.parse(fs.readFileSync(generationFile, "utf8")) as { protocol?: unknown }).protocol ?? "corrected";
    if (generated !== profile) logger.warn(`task ${taskId}: its page was generated under the ${String(generated)} protocol and is evaluated under ${profile}`);
  } catch {
    // An unreadable generation.json says nothing about the page's profile.
  }
}

/**
 * Evaluates one task's candidate unless its eval.json already scored this very page,
 * task and evaluator (then "skipped"). A changed or new page is scored again; when that
 * fails, the old eval.json no longer describes the page and moves to eval.stale.json, so
 * no report averages it, and the error goes to eval-error.json.
 */
export async function evaluateOneTask(
  task: Task,
  options: {
    resultDir: string;
    model: string;
    pairing: PairingMode | readonly PairingMode[];
    force?: boolean;
    candidateDir?: string;
    /** The page is built from the task's own (reference, blank, mutant): replayed seeded under either profile. */
    calibration?: boolean;
  },
  evaluator: Evaluator,
): Promise<{ outcome: TaskRunOutcome; evaluation?: TaskEvaluation }> {
  const started = Date.now();
  // An experiment's cells name their folder; otherwise it is the model's, as the benchmark lays it out.
  const candidateDir = options.candidateDir ?? candidateDirFor(options.resultDir, task.id, options.model);
  const files = candidateFiles(candidateDir);
  const modes = typeof options.pairing === "string" ? [options.pairing] : [...options.pairing];
  warnOnProtocolMix(files.generation, evaluator.profile, task.id);
  try {
    const primaryMode = modes[0];
    if (
      !options.force &&
      primaryMode &&
      unchangedRecord(files.eval, await evaluationInputs(task, candidateDir, evaluator, primaryMode, options.calibration ?? false))
    ) {
      return { outcome: { taskId: task.id, status: "skipped", candidateDir, wallMs: 0 } };
    }
    const evaluation = await evaluateTask({
      task,
      candidateDir,
      model: options.model,
      pairingModes: modes,
      evaluator,
      replace: true,
      calibration: options.calibration ?? false,
    });
    fs.rmSync(files.evalError, { force: true });
    const scores = evaluation.records[0]?.record.scores;
    return {
      outcome: { taskId: task.id, status: "evaluated", candidateDir, final: scores?.final, ifs: scores?.ifs, wallMs: Date.now() - started },
      evaluation,
    };
  } catch (error) {
    logger.error(`task ${task.id}: evaluation failed: ${errorMessage(error)}`);
    const record = toErrorRecord(error);
    if (fs.existsSync(files.eval)) fs.renameSync(files.eval, files.staleEval);
    // Recorded in the task's own folder; no eval.json is left, so a rerun tries the task again.
    writeFileAtomicSync(
      files.evalError,
      `${redactString(JSON.stringify({ taskId: task.id, model: options.model, failedAt: new Date().toISOString(), error: record }, null, 2))}\n`,
    );
    return { outcome: { taskId: task.id, status: "failed", candidateDir, error: record, wallMs: Date.now() - started } };
  }
}

export async function runEvaluation(options: EvaluateRunOptions): Promise<EvaluateRunSummary> {
  const started = Date.now();
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) throw new IwrError("CONFIG_INVALID", `--workers: expected a positive integer, got ${workers}`);
  modelFolderName(options.model);
  const tasks = selectTasks(
    await loadTasks(options.dataPath, { resolutionFallback: profileRules(options.profile ?? "corrected").missingResolution }),
    options.ids,
    options.dataPath,
  );
  const evaluator = await createEvaluator(options);
  try {
    const outcomes = await runPipelined(tasks, { workers, weight: trajectoryLength }, async (task) => {
      const { outcome } = await evaluateOneTask(task, { ...options, pairing: options.pairing ?? profileRules(evaluator.profile).pairing }, evaluator);
      options.onTask?.(outcome);
      return outcome;
    });
    let reportPath: string | undefined;
    if (outcomes.some((outcome) => outcome.status !== "failed")) {
      reportPath = rescore(options.resultDir, options.model, { taskOrder: tasks.map((task) => task.id) }).reportPath;
    }
    return { tasks: outcomes, ...(reportPath ? { reportPath } : {}), wallMs: Date.now() - started };
  } finally {
    await evaluator.close?.();
  }
}
