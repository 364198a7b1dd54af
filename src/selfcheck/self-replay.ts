/**
 * Self-replay: a list of actions — the agent's own, inferred from the video, or (a
 * labelled ablation) the task's action descriptions — run on a candidate page in the
 * sandboxed host with the evaluator's replay engine and the offline grounding. It takes
 * a task's inputs and the actions, nothing of its truth.
 *
 * Per step it reports what a critic needs: whether grounding found the target, page
 * errors, dialogs and blocked requests while the step ran, and whether the screen
 * changed. A screenshot is kept before the first action and after each one.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright";
import type { HostTimeouts, PageIncident, PageMemoryRecord } from "../browser/host.ts";
import type { ErrorRecord } from "../errors.ts";
import { MIN_CHANGED_PIXELS, pixelDiff } from "../metrics/pixel-diff.ts";
import { createHeuristicGrounder } from "../replay/grounding/heuristic.ts";
import { type PageSlots, replayHostedCandidate } from "../replay/hosted-replay.ts";
import type { ReplayAction, ReplayStep } from "../replay/replay.ts";
import type { TaskInputs } from "../tasks/inputs.ts";
import { type PageLintFacts, readLintFacts } from "./lint.ts";

export interface SelfReplayOptions {
  inputs: TaskInputs;
  actions: readonly ReplayAction[];
  /** The candidate's folder (index.html and files beside it). */
  candidateDir: string;
  /** Where `<i>.png` go (0: before the first action). */
  screenshotsDir: string;
  /** How steps cite their screenshots, relative to the record that cites them. */
  screenshotLabel?: (index: number) => string;
  /** Called as each screenshot is taken (OCR can start during the settle waits). */
  onScreenshot?: (index: number, png: Buffer) => void;
  memoryLimitMiB?: number;
  hostTimeouts?: Partial<HostTimeouts>;
  pageSlots?: PageSlots;
}

export interface SelfReplayStep {
  index: number;
  action: ReplayAction;
  executed: boolean;
  /** Why it did not execute: the grounding's or the action's reason. */
  failure?: string;
  /** Grounding found no element, or an element not in the list. */
  groundingFailed: boolean;
  /** Pixels that changed between the screenshot before and after (0 when not executed). */
  changedPixels: number;
  /** More than the offline judge's "something happened" threshold changed. */
  screenChanged: boolean;
  pageErrors: string[];
  dialogs: string[];
  blockedRequests: string[];
  /** The screenshot after the step, when it executed. */
  screenshot?: string;
  target?: ReplayStep["target"];
}

export interface SelfReplayResult {
  steps: SelfReplayStep[];
  executed: number;
  /** Screenshots by index: 0 the initial state, i + 1 after action i. */
  screenshots: Buffer[];
  screenshotPaths: string[];
  /** The page broke down (load error, hung, crashed, over its memory limit). */
  error?: ErrorRecord;
  incidents: PageIncident[];
  memory?: PageMemoryRecord;
  lint?: PageLintFacts;
  /** When the initial screenshot was taken, on the host's clock. */
  loadedAtMs?: number;
  /** How long the replay waited for a free page slot (other pages' replays), before any work of its own. */
  slotWaitMs: number;
}

/** The folder that every file of a task must stay inside: the task set's (<set>/<id>/assets → <set>). */
function taskSetDirOf(inputs: TaskInputs): string {
  return path.dirname(path.dirname(inputs.assetsDir));
}

function incidentsDuring(incidents: readonly PageIncident[], kind: PageIncident["kind"], from?: number, to?: number): string[] {
  if (from === undefined || to === undefined) return [];
  return incidents.filter((incident) => incident.kind === kind && incident.atMs >= from && incident.atMs <= to).map((incident) => incident.detail);
}

export async function selfReplay(options: SelfReplayOptions): Promise<SelfReplayResult> {
  let lint: PageLintFacts | undefined;
  const probe = async (index: number, page: Page): Promise<void> => {
    if (index !== 0) return;
    lint = await readLintFacts(page);
  };
  await fs.mkdir(options.screenshotsDir, { recursive: true });
  // Each step's changed pixels are counted as its screenshot comes, during the next settle wait.
  const shots: Buffer[] = [];
  const changes: Array<Promise<number>> = [];
  const onScreenshot = (index: number, png: Buffer) => {
    shots[index] = png;
    const before = shots[index - 1];
    if (before) {
      const counting = pixelDiff(before, png).then((diff) => diff.changedPixels);
      counting.catch(() => undefined);
      changes[index - 1] = counting;
    }
    options.onScreenshot?.(index, png);
  };
  const hosted = await replayHostedCandidate({
    candidateDir: options.candidateDir,
    assetsDir: options.inputs.assetsDir,
    confineAssetsTo: taskSetDirOf(options.inputs),
    resolution: options.inputs.resolution,
    actions: options.actions,
    grounder: createHeuristicGrounder(),
    screenshotsDir: options.screenshotsDir,
    probe,
    ...(options.screenshotLabel ? { screenshotLabel: options.screenshotLabel } : {}),
    onScreenshot,
    ...(options.memoryLimitMiB ? { memoryLimitMiB: options.memoryLimitMiB } : {}),
    ...(options.hostTimeouts ? { hostTimeouts: options.hostTimeouts } : {}),
    ...(options.pageSlots ? { pageSlots: options.pageSlots } : {}),
  });
  const page = await hosted.closed;
  const { replay } = hosted;
  // The first action starts right after the initial screenshot: errors before it were at load.
  const loadedAtMs = replay.steps[0]?.startedAtMs;
  const screenshotPaths = replay.evalpoints.map((_, index) => path.join(options.screenshotsDir, `${index}.png`));
  const steps: SelfReplayStep[] = [];
  for (const [index, action] of options.actions.entries()) {
    const step = replay.steps[index];
    const executed = index < replay.executed;
    const before = replay.evalpoints[index];
    const after = executed ? replay.evalpoints[index + 1] : undefined;
    const changedPixels = before && after ? await (changes[index] ?? pixelDiff(before, after).then((diff) => diff.changedPixels)) : 0;
    const groundingFailed = step?.grounding !== undefined && !step.ok && /grounding/.test(step.reason ?? "");
    steps.push({
      index,
      action,
      executed,
      ...(step && !executed ? { failure: step.reason ?? "not reached" } : !step ? { failure: "not reached: an earlier step failed" } : {}),
      groundingFailed,
      changedPixels,
      screenChanged: changedPixels >= MIN_CHANGED_PIXELS,
      pageErrors: incidentsDuring(page.incidents, "page-error", step?.startedAtMs, step?.endedAtMs),
      dialogs: incidentsDuring(page.incidents, "dialog", step?.startedAtMs, step?.endedAtMs),
      blockedRequests: incidentsDuring(page.incidents, "blocked-request", step?.startedAtMs, step?.endedAtMs),
      ...(step?.evalpoint ? { screenshot: step.evalpoint } : {}),
      ...(step?.target ? { target: step.target } : {}),
    });
  }
  return {
    steps,
    executed: replay.executed,
    screenshots: replay.evalpoints,
    screenshotPaths,
    ...(replay.error ? { error: replay.error } : page.tornDown ? { error: page.tornDown } : {}),
    incidents: page.incidents,
    ...(page.memory ? { memory: page.memory } : {}),
    ...(lint ? { lint } : {}),
    ...(loadedAtMs !== undefined ? { loadedAtMs } : {}),
    slotWaitMs: hosted.timings.slotWaitMs,
  };
}
