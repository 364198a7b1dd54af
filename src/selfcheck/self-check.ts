/**
 * The self-check of one candidate page, from a task's inputs only: the video's stable
 * states, a self-replay of the given actions, an alignment of its screenshots to the
 * states, lint, the self-score and the ranked findings, written to selfcheck.json.
 *
 * It never reads a task's truth: its interface takes TaskInputs and a list of actions
 * (inferred by an agent, or, in the labelled "given" ablation, the task's action
 * descriptions). Screenshot texts are read while the replay waits out its settle times;
 * the video frames' texts and features are read once and kept (they are the task's
 * inputs, the same for every draft).
 */
import fs from "node:fs";
import type { HostTimeouts } from "../browser/host.ts";
import { type ErrorRecord, errorMessage, IwrError, toErrorRecord } from "../errors.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { type VideoState, type VideoStates, videoStates } from "../media/video-states.ts";
import { ocrEngineInfo } from "../metrics/ocr.ts";
import type { VisualMetric } from "../metrics/visual.ts";
import type { PageSlots } from "../replay/hosted-replay.ts";
import type { ReplayAction } from "../replay/replay.ts";
import { candidateFiles, RESULT_FILES } from "../results/layout.ts";
import type { TaskInputs } from "../tasks/inputs.ts";
import { alignTrajectory, type ImageReading, isBlankPicture, pairSimilarity, readImage } from "./compare.ts";
import { type LintFinding, lintFindings } from "./lint.ts";
import { type Finding, SELF_SCORE_WEIGHTS, type StepVerdict, scoreSelfCheck } from "./score.ts";
import { scrolledFromPrevious } from "./scroll.ts";
import { type SelfReplayStep, selfReplay } from "./self-replay.ts";
import { StepEvidenceSource } from "./step-evidence.ts";

export const SELF_CHECK_RECORD_VERSION = 1;

/** Where the actions came from: the agent's own analysis, or the task's descriptions (a labelled ablation). */
export type Trajectory = "inferred" | "given";

export interface SelfCheckOptions {
  inputs: TaskInputs;
  actions: readonly ReplayAction[];
  trajectory: Trajectory;
  /** The candidate's folder (index.html). */
  candidateDir: string;
  /** Where selfcheck.json and self-check/<i>.png go (default: the candidate's folder). */
  outDir?: string;
  /** The visual metric shared by a run (DINO, or the labelled fallback). */
  metric: VisualMetric;
  statesCacheDir?: string;
  memoryLimitMiB?: number;
  /** Host limits (the defaults suit real runs; tests shorten them). */
  hostTimeouts?: Partial<HostTimeouts>;
  pageSlots?: PageSlots;
}

export interface SelfCheckStep extends SelfReplayStep, StepVerdict {
  similarity?: { text: number; image: number; combined: number };
  videoSec?: number;
}

export interface SelfCheckRecord {
  version: number;
  taskId: number;
  trajectory: Trajectory;
  actions: ReplayAction[];
  selfScore: number;
  behaviour: number;
  appearance: number;
  formula: string;
  steps: SelfCheckStep[];
  /** Ranked by cost, highest first. */
  findings: Finding[];
  lint: LintFinding[];
  video: {
    sha256?: string;
    /** `scrolled`: the state is the one before it scrolled (scroll.ts), so the alignment may pass over it freely. */
    states: Array<Pick<VideoState, "index" | "startSec" | "endSec" | "frameSec" | "framePath"> & { scrolled?: true }>;
    findings: string[];
    error?: ErrorRecord;
  };
  /** The screenshot before the first action: its aligned state and similarity. */
  initial?: { state: number; similarity: { text: number; image: number; combined: number } };
  page: { error?: ErrorRecord; memory?: unknown; screenshots: string[] };
  settings: { grounding: "heuristic"; ocrEngine: string; visualMetric: string; dinoStatus: string };
  /** replayMs includes slotWaitMs: the wait for a free page slot while other pages replay (0 when nothing else runs). */
  timings: { totalMs: number; videoStatesMs: number; replayMs: number; slotWaitMs: number; compareMs: number };
}

const FORMULA =
  `selfScore = ${SELF_SCORE_WEIGHTS.behaviour}·behaviour + ${SELF_SCORE_WEIGHTS.appearance}·appearance; ` +
  "behaviour = steps that executed and changed the screen exactly when the aligned video did, " +
  "and as it did (the words it gained, or where it changed) / actions; " +
  "appearance = mean (text + image similarity) / 2 of each screenshot (the initial one and one per action; one not taken counts 0) and its aligned video state";

/** A state's frame read and measured, or the reason it could not be, naming the file. */
async function readStateFrame(state: VideoState, metric: VisualMetric): Promise<{ reading?: ImageReading; error?: ErrorRecord }> {
  try {
    return { reading: await readImage(await fs.promises.readFile(state.framePath), metric) };
  } catch (error) {
    return {
      error: toErrorRecord(
        new IwrError("MEDIA", `the video state frame ${state.framePath} could not be read: ${errorMessage(error)}`, { file: state.framePath }),
      ),
    };
  }
}

async function statesOf(videoPath: string, cacheDir: string | undefined): Promise<{ states?: VideoStates; error?: ErrorRecord }> {
  try {
    return { states: await videoStates(videoPath, cacheDir ? { cacheDir } : {}) };
  } catch (error) {
    return { error: toErrorRecord(error) };
  }
}

export async function runSelfCheck(options: SelfCheckOptions): Promise<SelfCheckRecord> {
  const started = Date.now();
  const outDir = options.outDir ?? options.candidateDir;
  const files = candidateFiles(outDir);
  const label = (index: number) => `${RESULT_FILES.selfCheckShots}/${index}.png`;
  const { metric } = options;

  const video = await statesOf(options.inputs.videoPath, options.statesCacheDir);
  const videoStatesMs = Date.now() - started;
  let states = video.states?.states ?? [];
  // The video's frames are the task's inputs: read once, kept on disk between drafts and runs.
  // Read while the page replays; a failure is held as a value at once (never an unhandled rejection) and named below.
  const stateReadings = states.map((state) => readStateFrame(state, metric));
  const shotReadings: Array<Promise<ImageReading>> = [];
  const replayStarted = Date.now();
  const replay = await selfReplay({
    inputs: options.inputs,
    actions: options.actions,
    candidateDir: options.candidateDir,
    screenshotsDir: files.selfCheckShots,
    screenshotLabel: label,
    onScreenshot: (index, png) => {
      shotReadings[index] = readImage(png, metric);
      shotReadings[index]?.catch(() => undefined);
    },
    ...(options.memoryLimitMiB ? { memoryLimitMiB: options.memoryLimitMiB } : {}),
    ...(options.hostTimeouts ? { hostTimeouts: options.hostTimeouts } : {}),
    ...(options.pageSlots ? { pageSlots: options.pageSlots } : {}),
  });
  const replayMs = Date.now() - replayStarted;

  const compareStarted = Date.now();
  const stateResults = await Promise.all(stateReadings);
  const unreadable = stateResults.find((result) => result.error !== undefined);
  if (unreadable?.error) {
    // Compared with no state rather than crash the run: the record says which frame failed.
    video.error = unreadable.error;
    states = [];
  }
  const stateImages = unreadable ? [] : stateResults.map((result) => result.reading!);
  const shots = await Promise.all(shotReadings);
  const matrix = shots.map((shot) => stateImages.map((state) => pairSimilarity(shot, state, metric)));
  const changes = new StepEvidenceSource(shots, stateImages);
  // A recording often starts before the page has drawn anything: those frames are not a state of the page.
  const blankLead = stateImages.findIndex((image) => !isBlankPicture(image));
  const scrolled = scrolledFromPrevious(stateImages.map((image) => image.pixels));
  const alignment = alignTrajectory(matrix, {
    states,
    scrolled,
    firstState: Math.max(0, blankLead),
    anchorEnd: replay.executed === options.actions.length && options.actions.length > 0,
    changeLikeness: (step, from, to) => changes.likeness(step, from, to),
  });
  // Evidence only where both changed: whether the page's change was the video's.
  const evidence = replay.steps.map((step, k) => {
    const [before, after] = [alignment.states[k], alignment.states[k + 1]];
    if (!step.executed || !step.screenChanged || before === undefined || after === undefined || before === after) return undefined;
    return changes.evidence(k, before, after);
  });
  // The page's own source, for links it writes to other origins (none when it is missing).
  const page = candidateFiles(options.candidateDir).page;
  const html = fs.existsSync(page) ? fs.readFileSync(page, "utf8") : "";
  const lint = lintFindings({
    html,
    ...(replay.lint ? { facts: replay.lint } : {}),
    incidents: replay.incidents,
    ...(replay.loadedAtMs !== undefined ? { loadedAtMs: replay.loadedAtMs } : {}),
  });
  const score = scoreSelfCheck({ replay, states, alignment, lint, evidence, screenshotLabel: label });
  if (video.error) score.findings.push({ kind: "video", cost: 0, message: `the video could not be read: ${video.error.message}` });
  for (const finding of video.states?.findings ?? []) score.findings.push({ kind: "video", cost: 0, message: finding });
  const compareMs = Date.now() - compareStarted;

  const scorers = { ocr: await ocrEngineInfo(), visual: metric.info };
  const record: SelfCheckRecord = {
    version: SELF_CHECK_RECORD_VERSION,
    taskId: options.inputs.id,
    trajectory: options.trajectory,
    actions: [...options.actions],
    selfScore: score.selfScore,
    behaviour: score.behaviour,
    appearance: score.appearance,
    formula: FORMULA,
    steps: replay.steps.map((step, index) => {
      const verdict = score.steps[index];
      const similarity = alignment.similarities[index + 1];
      const state = alignment.states[index + 1];
      return {
        ...step,
        ...(verdict ?? { executed: step.executed, screenChanged: step.screenChanged, credited: false }),
        ...(similarity && step.executed ? { similarity } : {}),
        ...(state !== undefined && step.executed ? { videoSec: states[state]?.frameSec } : {}),
      };
    }),
    findings: score.findings,
    lint,
    video: {
      ...(video.states ? { sha256: video.states.video.sha256 } : {}),
      states: states.map(({ index, startSec, endSec, frameSec, framePath }) => ({
        index,
        startSec,
        endSec,
        frameSec,
        framePath,
        ...(scrolled[index] ? { scrolled: true as const } : {}),
      })),
      findings: video.states?.findings ?? [],
      ...(video.error ? { error: video.error } : {}),
    },
    ...(alignment.states[0] !== undefined && alignment.similarities[0]
      ? { initial: { state: alignment.states[0], similarity: alignment.similarities[0] } }
      : {}),
    page: {
      ...(replay.error ? { error: replay.error } : {}),
      ...(replay.memory ? { memory: replay.memory } : {}),
      screenshots: replay.screenshots.map((_, index) => label(index)),
    },
    settings: {
      grounding: "heuristic",
      ocrEngine: `${scorers.ocr.name} ${scorers.ocr.version} ${scorers.ocr.detail}`,
      visualMetric: scorers.visual.name,
      dinoStatus: scorers.visual.dino.status === "available" ? "available" : `unavailable: ${scorers.visual.dino.reason}`,
    },
    timings: { totalMs: Date.now() - started, videoStatesMs, replayMs, slotWaitMs: replay.slotWaitMs, compareMs },
  };
  await writeFileAtomic(files.selfCheck, `${JSON.stringify(record, null, 2)}\n`);
  return record;
}
