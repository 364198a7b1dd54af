/**
 * One cell as the view's cell page shows it, read from the cell's records: per step the
 * task's action and assertion, the replay's outcome (grounding, target, reason), the
 * judge's verdict and reason, the visual scores with both OCR texts, and which images
 * exist (checkpoint, the page's screenshot, the video's aligned state from the
 * self-check); the replay's incidents; the trace; and, for agent cells, the iterations
 * (agent-timeline.ts). Records are read loosely: a field a record lacks is left out.
 */
import fs from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors.ts";
import { type EvalRecord, readEvalRecord } from "../evaluator/eval-record.ts";
import type { FirstFailure } from "../report/failures.ts";
import { actionCheckpoints } from "../report/report-data.ts";
import { candidateFiles, RESULT_FILES } from "../results/layout.ts";
import { type AgentTimeline, agentTimeline } from "./agent-timeline.ts";
import { readLooseJson } from "./read-json.ts";
import type { IndexedCell, RunIndex } from "./run-index.ts";

export interface StepImage {
  /** The URL path of the image (the server makes thumbnails with ?size=). */
  url: string;
  caption: string;
}

export interface StepView {
  /** -1 for the initial state, else the 0-based action index. */
  index: number;
  type?: string;
  description?: string;
  assertion?: string;
  /** Whether the replay got to this step, and how it went. */
  reached: boolean;
  ok?: boolean;
  reason?: string;
  grounding?: { method?: string; index?: number; score?: number; reason?: string; target?: string };
  durationMs?: number;
  verdict?: { result: string; reason?: string; reply?: string; repeats?: string[] };
  /** The step's entry in the visual list, when it has one. */
  visual?: {
    position: number;
    counted: boolean;
    ocr?: number;
    dino?: number;
    mllm?: number;
    checkpointText?: string;
    screenshotText?: string;
    judgeReply?: string;
  };
  checkpoint?: StepImage;
  screenshot?: StepImage;
  video?: StepImage & { sec?: number; similarity?: number };
  selfCheck?: { executed?: boolean; screenChanged?: boolean; credited?: boolean; groundingFailed?: boolean };
  /** This is the cell's first failing step. */
  failing: boolean;
}

export interface CellDetail {
  id: string;
  arm: string;
  kind: string;
  repeat: number;
  taskId: number;
  dir: string;
  status: string;
  error?: string;
  scores: { final: number; ifs: number; lfs: number; hfs: number; vfs: number };
  totalSteps?: number;
  successStep?: number;
  failure?: FirstFailure;
  costUsd: number;
  tokens: number;
  wallMs: number;
  page: { made: boolean; origin?: string };
  evaluator?: Record<string, string>;
  stopReason?: string;
  trace?: { path: string; command: string; url: string };
  incidents: { counts: Record<string, number>; list: Array<{ kind: string; detail: string; atMs?: number }>; loadError?: string; tornDown?: string };
  steps: StepView[];
  selfCheck?: {
    selfScore?: number;
    behaviour?: number;
    appearance?: number;
    formula?: string;
    findings: Array<{ kind: string; step?: number; message: string }>;
  };
  agent?: AgentTimeline;
  /** Records that could not be read, and why. */
  problems: string[];
}

// Loose shapes of the records the view reads (the writers own the strict ones).
interface ReplayFile {
  steps?: Array<{
    index: number;
    type?: string;
    description?: string;
    ok?: boolean;
    reason?: string;
    durationMs?: number;
    grounding?: { method?: string; index?: number; score?: number; reason?: string };
    target?: { tag?: string; role?: string; text?: string };
    typedText?: string;
    key?: string;
  }>;
  incidents?: Array<{ kind: string; detail: string; atMs?: number }>;
  incidentCounts?: Record<string, number>;
  loadError?: { code: string; message: string };
  tornDown?: { code: string; message: string };
}

interface SelfCheckFile {
  selfScore?: number;
  behaviour?: number;
  appearance?: number;
  formula?: string;
  steps?: Array<{
    index: number;
    executed?: boolean;
    screenChanged?: boolean;
    credited?: boolean;
    groundingFailed?: boolean;
    state?: number;
    videoSec?: number;
    similarity?: { combined?: number };
  }>;
  findings?: Array<{ kind: string; step?: number; message: string }>;
  video?: { states?: Array<{ index: number; frameSec?: number; framePath?: string }> };
  initial?: { state: number; similarity?: { combined?: number } };
}

/** The URL path segment of a cell (arm, repeat, task), as the server's routes take it. */
export function cellPath(cell: Pick<IndexedCell, "record">): string {
  return `${encodeURIComponent(cell.record.arm)}/${cell.record.repeat}/${cell.record.taskId}`;
}

/** The video state the self-check aligned a step (or the initial screenshot) with. */
export function alignedState(selfCheck: SelfCheckFile | undefined, step: number): { state: number; sec?: number; similarity?: number } | undefined {
  if (!selfCheck) return undefined;
  if (step < 0) return selfCheck.initial ? { state: selfCheck.initial.state, similarity: selfCheck.initial.similarity?.combined ?? 0 } : undefined;
  const entry = selfCheck.steps?.find((candidate) => candidate.index === step);
  if (entry?.state === undefined) return undefined;
  const sec = entry.videoSec ?? selfCheck.video?.states?.find((state) => state.index === entry.state)?.frameSec;
  return {
    state: entry.state,
    ...(sec !== undefined ? { sec } : {}),
    ...(entry.similarity?.combined !== undefined ? { similarity: entry.similarity.combined } : {}),
  };
}

export function readSelfCheck(dir: string, problems: string[]): SelfCheckFile | undefined {
  return readLooseJson<SelfCheckFile>(candidateFiles(dir).selfCheck, problems);
}

export function cellDetail(index: RunIndex, cell: IndexedCell): CellDetail {
  const { record, scores } = cell;
  const dir = scores.dir;
  const files = candidateFiles(dir);
  const problems: string[] = [];
  let evaluation: EvalRecord | undefined;
  if (fs.existsSync(files.eval)) {
    try {
      evaluation = readEvalRecord(files.eval);
    } catch (error) {
      problems.push(`eval.json: ${errorMessage(error)}`);
    }
  }
  const replay = readLooseJson<ReplayFile>(files.replay, problems);
  const selfCheck = readSelfCheck(dir, problems);
  const task = index.tasks.get(record.taskId);
  const base = `/img/${cellPath(cell)}`;

  const actions =
    task?.truth.actions.map((action) => ({ type: action.type, description: action.parameters.description, assertion: action.logical_assertion })) ??
    (replay?.steps ?? []).map((step) => ({ type: step.type ?? "", description: step.description ?? "", assertion: "" }));
  const checkpointOf = task ? actionCheckpoints(task).map((entry) => entry.checkpoint) : [];
  const executed = evaluation?.executedSteps ?? replay?.steps?.filter((step) => step.ok).length ?? 0;
  const evalpointExists = (n: number) => fs.existsSync(files.evalpoint(n));
  const visualByAction = new Map<number | null, { entry: EvalRecord["steps"][number] | EvalRecord["truncated"][number]; counted: boolean }>();
  for (const entry of evaluation?.truncated ?? []) visualByAction.set(entry.actionIndex, { entry, counted: false });
  for (const entry of evaluation?.steps ?? []) visualByAction.set(entry.actionIndex, { entry, counted: true });

  const steps: StepView[] = [];
  for (let step = -1; step < actions.length; step++) {
    const action = step >= 0 ? actions[step] : undefined;
    const replayStep = replay?.steps?.find((entry) => entry.index === step);
    const assertion = evaluation?.assertions.find((entry) => entry.actionIndex === step);
    const visual = visualByAction.get(step < 0 ? null : step);
    const checkpointIndex = step < 0 ? 0 : (visual?.entry.position ?? checkpointOf[step] ?? null);
    const shotIndex = step + 1;
    const aligned = alignedState(selfCheck, step);
    const selfStep = step >= 0 ? selfCheck?.steps?.find((entry) => entry.index === step) : undefined;
    const view: StepView = {
      index: step,
      ...(action ? { type: action.type, description: action.description } : {}),
      ...(action?.assertion ? { assertion: action.assertion } : {}),
      reached: step < 0 ? evalpointExists(0) : step <= executed,
      failing: scores.failure?.step === step,
    };
    if (replayStep) {
      if (replayStep.ok !== undefined) view.ok = replayStep.ok;
      if (replayStep.reason) view.reason = replayStep.reason;
      if (replayStep.durationMs !== undefined) view.durationMs = replayStep.durationMs;
      const target = replayStep.target ? [replayStep.target.tag, replayStep.target.role, replayStep.target.text].filter(Boolean).join(" · ") : undefined;
      const typed = replayStep.typedText !== undefined ? `typed '${replayStep.typedText}'` : replayStep.key ? `key ${replayStep.key}` : undefined;
      if (replayStep.grounding || target || typed)
        view.grounding = {
          ...(replayStep.grounding?.method ? { method: replayStep.grounding.method } : {}),
          ...(replayStep.grounding?.index !== undefined ? { index: replayStep.grounding.index } : {}),
          ...(replayStep.grounding?.score !== undefined ? { score: replayStep.grounding.score } : {}),
          ...(replayStep.grounding?.reason ? { reason: replayStep.grounding.reason } : {}),
          ...(target || typed ? { target: [target, typed].filter(Boolean).join(" — ") } : {}),
        };
    }
    if (assertion)
      view.verdict = {
        result: assertion.result,
        ...(assertion.think ? { reason: assertion.think } : {}),
        ...(assertion.reply ? { reply: assertion.reply } : {}),
        ...(assertion.repeats ? { repeats: assertion.repeats } : {}),
      };
    if (visual) {
      const entry = visual.entry;
      const scored = "ocr" in entry ? entry : undefined;
      view.visual = {
        position: entry.position,
        counted: visual.counted,
        ...(scored
          ? {
              ocr: scored.ocr,
              dino: scored.dino,
              mllm: scored.mllm,
              checkpointText: scored.checkpointText,
              screenshotText: scored.screenshotText,
              judgeReply: scored.judgeReply,
            }
          : {}),
      };
    }
    if (checkpointIndex !== null && task?.truth.checkpointPaths[checkpointIndex])
      view.checkpoint = { url: `/img/checkpoint/${record.taskId}/${checkpointIndex}`, caption: `checkpoint step_${checkpointIndex}` };
    if (evalpointExists(shotIndex))
      view.screenshot = { url: `${base}/evalpoint/${shotIndex}`, caption: step < 0 ? "page before any action" : `page after action ${step + 1}` };
    if (aligned)
      view.video = {
        url: `${base}/video/${step < 0 ? "initial" : step}`,
        caption: `video state ${aligned.state}${aligned.sec !== undefined ? ` at ${aligned.sec.toFixed(1)} s` : ""}`,
        ...(aligned.sec !== undefined ? { sec: aligned.sec } : {}),
        ...(aligned.similarity !== undefined ? { similarity: aligned.similarity } : {}),
      };
    if (selfStep)
      view.selfCheck = {
        ...(selfStep.executed !== undefined ? { executed: selfStep.executed } : {}),
        ...(selfStep.screenChanged !== undefined ? { screenChanged: selfStep.screenChanged } : {}),
        ...(selfStep.credited !== undefined ? { credited: selfStep.credited } : {}),
        ...(selfStep.groundingFailed !== undefined ? { groundingFailed: selfStep.groundingFailed } : {}),
      };
    steps.push(view);
  }

  const settings = evaluation?.settings;
  const origin = fs.existsSync(path.join(dir, RESULT_FILES.mutant))
    ? "mutant of the true page (mutant.json)"
    : fs.existsSync(path.join(dir, RESULT_FILES.source))
      ? "taken from another results folder (source.json)"
      : fs.existsSync(path.join(dir, RESULT_FILES.agent))
        ? "the reconstruction agent (agent.json)"
        : fs.existsSync(path.join(dir, RESULT_FILES.generation))
          ? "a model's reply (generation.json)"
          : undefined;
  const agent = fs.existsSync(path.join(dir, RESULT_FILES.agent)) ? agentTimeline(cell, problems) : undefined;
  return {
    id: cell.id,
    arm: record.arm,
    kind: cell.kind,
    repeat: record.repeat,
    taskId: record.taskId,
    dir,
    status: record.status,
    ...(scores.error ? { error: scores.error } : {}),
    scores: { final: scores.final, ifs: scores.ifs, lfs: scores.lfs, hfs: scores.hfs, vfs: scores.vfs },
    ...(evaluation ? { totalSteps: evaluation.totalSteps, successStep: evaluation.successStep } : {}),
    ...(scores.failure ? { failure: scores.failure } : {}),
    costUsd: scores.costUsd,
    tokens: scores.tokens,
    wallMs: scores.wallMs,
    page: { made: scores.hasPage, ...(origin ? { origin } : {}) },
    ...(settings
      ? {
          evaluator: {
            protocol: settings.protocol,
            pairing: settings.pairingMode,
            judge: `${settings.assertionJudgeKind} ${settings.assertionJudgeModel}`,
            grounding: `${settings.groundingKind} ${settings.groundingModel}`,
            ocr: `${settings.ocrEngine} ${settings.ocrEngineVersion}`,
            visual: settings.visualMetric,
            mllm: `${settings.mllmJudgeKind} ${settings.mllmJudgeModel}`,
          },
        }
      : {}),
    ...(evaluation?.stopReason ? { stopReason: `${evaluation.stopReason.code}: ${evaluation.stopReason.message}` } : {}),
    ...(fs.existsSync(files.trace)
      ? { trace: { path: files.trace, command: `npx playwright show-trace ${shellQuote(files.trace)}`, url: `/file/${cellPath(cell)}/trace.zip` } }
      : {}),
    incidents: {
      counts: Object.fromEntries(Object.entries(replay?.incidentCounts ?? {}).filter(([, count]) => count > 0)),
      list: replay?.incidents ?? [],
      ...(replay?.loadError ? { loadError: `${replay.loadError.code}: ${replay.loadError.message}` } : {}),
      ...(replay?.tornDown ? { tornDown: `${replay.tornDown.code}: ${replay.tornDown.message}` } : {}),
    },
    steps,
    ...(selfCheck
      ? {
          selfCheck: {
            ...(selfCheck.selfScore !== undefined ? { selfScore: selfCheck.selfScore } : {}),
            ...(selfCheck.behaviour !== undefined ? { behaviour: selfCheck.behaviour } : {}),
            ...(selfCheck.appearance !== undefined ? { appearance: selfCheck.appearance } : {}),
            ...(selfCheck.formula ? { formula: selfCheck.formula } : {}),
            findings: (selfCheck.findings ?? []).map((finding) => ({
              kind: finding.kind,
              ...(finding.step !== undefined ? { step: finding.step } : {}),
              message: finding.message,
            })),
          },
        }
      : {}),
    ...(agent ? { agent } : {}),
    problems,
  };
}

/** A path as a shell word (quoted unless it is made of plain characters only). */
export function shellQuote(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
