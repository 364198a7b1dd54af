/**
 * The self-check on a bundled task (real video, real Chromium, real OCR): the true page
 * scores high and behaves as the video; a frozen mutant scores lower with the failure
 * ranked first; it reads no truth (a copy without checkpoints/ and assertions gives the
 * same record, and no checkpoint file is even opened); bad inputs give findings.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { referencePageHtml, writeCalibrationCandidate } from "../../src/calibration/calibration.ts";
import { shutdownOcr } from "../../src/metrics/ocr.ts";
import { createVisualMetric, type VisualMetric } from "../../src/metrics/visual.ts";
import { mutantDir, writeMutant } from "../../src/mutants/ladder.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { runSelfCheck, type SelfCheckRecord } from "../../src/selfcheck/self-check.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";

const TASK_ID = 10;
let dir: string;
let task: Task;
let metric: VisualMetric;
let reference: SelfCheckRecord;

beforeAll(async () => {
  dir = tempDir("selfcheck");
  // A copy of the bundled task set, so checkpoints can be watched and removed.
  fs.cpSync("tasks/iwr-mini", path.join(dir, "set", "iwr-mini"), { recursive: true });
  fs.copyFileSync("tasks/iwr-mini.jsonl", path.join(dir, "set", "iwr-mini.jsonl"));
  task = (await loadTasks(path.join(dir, "set", "iwr-mini.jsonl"))).find((entry) => entry.id === TASK_ID)!;
  metric = await createVisualMetric();
}, 120_000);
afterAll(async () => {
  await closeSharedBrowser();
  await shutdownOcr();
  fs.rmSync(dir, { recursive: true, force: true });
});

const check = (candidateDir: string, inputs = task.inputs, actions = task.truth.actions.map(replayActionOf)) =>
  runSelfCheck({ inputs, actions, trajectory: "given", candidateDir, metric, statesCacheDir: path.join(dir, "states"), hostTimeouts: { navigationMs: 4_000 } });

describe("self-check", () => {
  it("the true page behaves as the video, scores high, and no checkpoint file is opened", async () => {
    const checkpoints = task.truth.checkpointPaths;
    const old = new Date(Date.now() - 3 * 24 * 3600 * 1000);
    for (const file of checkpoints) fs.utimesSync(file, old, fs.statSync(file).mtime);
    reference = await check(writeCalibrationCandidate(task, path.join(dir, "results"), "reference"));
    // Reading a file moves its access time (relatime: it was days old): none moved.
    for (const file of checkpoints) expect(fs.statSync(file).atimeMs, file).toBeLessThan(Date.now() - 2 * 24 * 3600 * 1000);
    expect(reference.behaviour).toBe(1);
    expect(reference.selfScore).toBeGreaterThan(0.9);
    expect(reference.steps.every((step) => step.executed && step.credited)).toBe(true);
    expect(reference.video.states.length).toBeGreaterThanOrEqual(task.truth.actions.length);
    expect(reference.findings.map((finding) => finding.cost)).toEqual([...reference.findings.map((finding) => finding.cost)].sort((a, b) => b - a));
    const shots = path.join(dir, "results", String(TASK_ID), "reference", "self-check");
    expect(fs.readdirSync(shots).length).toBe(task.truth.actions.length + 1);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "results", String(TASK_ID), "reference", "selfcheck.json"), "utf8")).selfScore).toBe(reference.selfScore);
  });

  it("gives the same record for a copy of the task without checkpoints/ and without assertions", async () => {
    const stripped = path.join(dir, "stripped");
    fs.cpSync(path.join(dir, "set"), stripped, { recursive: true });
    fs.rmSync(path.join(stripped, "iwr-mini", String(TASK_ID), "checkpoints"), { recursive: true });
    const lines = fs
      .readFileSync(path.join(stripped, "iwr-mini.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    for (const line of lines) for (const step of line.action_sequence) step.logical_assertion = "";
    fs.writeFileSync(path.join(stripped, "iwr-mini.jsonl"), `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    const bare = (await loadTasks(path.join(stripped, "iwr-mini.jsonl"), { needsCheckpoints: false })).find((entry) => entry.id === TASK_ID)!;
    expect(bare.truth.checkpointPaths).toEqual([]);
    // The same true page, its asset links pointing into the stripped copy's own assets.
    const candidateDir = path.join(dir, "stripped-results", String(TASK_ID), "reference");
    const candidate = writeCandidate(candidateDir, referencePageHtml(bare, candidateDir));
    const again = await check(candidate, bare.inputs, bare.line.action_sequence.map(replayActionOf));
    const comparable = (record: SelfCheckRecord) => ({
      selfScore: record.selfScore,
      steps: record.steps.map(({ index, executed, credited, screenChanged, videoChanged, state }) => ({
        index,
        executed,
        credited,
        screenChanged,
        videoChanged,
        state,
      })),
      findings: record.findings.map(({ kind, step }) => ({ kind, step })),
    });
    expect(comparable(again)).toEqual(comparable(reference));
  });

  it("a mutant frozen after two gestures scores lower, its first frozen step ranked first", async () => {
    const spec = { operator: "freeze-after" as const, parameter: 2 };
    const folder = mutantDir(path.join(dir, "results"), TASK_ID, spec);
    writeMutant(folder, referencePageHtml(task, folder), spec, "test");
    const frozen = await check(folder);
    expect(frozen.selfScore).toBeLessThan(reference.selfScore - 0.2);
    expect(frozen.steps.slice(0, 2).every((step) => step.credited)).toBe(true);
    expect(frozen.findings[0]).toMatchObject({ step: 2 });
    expect(frozen.findings[0]?.kind).toMatch(/^(no-change|step-failed)$/);
    expect(frozen.findings[0]?.videoFrame).toMatch(/\.png$/);
  });
});

describe("self-check on bad input", () => {
  it("an empty action list, actions that name nothing, a broken video: findings, never a crash", async () => {
    const candidate = writeCalibrationCandidate(task, path.join(dir, "bad"), "reference");
    const none = await check(candidate, task.inputs, []);
    expect(none.findings.some((finding) => /no action to replay/.test(finding.message))).toBe(true);
    const nothing = await check(candidate, task.inputs, [{ type: "Click", description: "the 'Launch rocket' button" }]);
    expect(nothing.steps[0]).toMatchObject({ executed: false, groundingFailed: true });
    expect(nothing.findings[0]).toMatchObject({ kind: "step-failed", step: 0 });
    expect(nothing.findings[0]?.message).toMatch(/grounding found no element for 'the 'Launch rocket' button'/);
    const brokenVideo = path.join(dir, "broken.mp4");
    fs.writeFileSync(brokenVideo, "not a video");
    const blind = await check(candidate, { ...task.inputs, videoPath: brokenVideo }, task.truth.actions.map(replayActionOf));
    expect(blind.video.error?.code).toBe("MEDIA");
    expect(blind.findings.some((finding) => finding.kind === "video" && /could not be read/.test(finding.message))).toBe(true);
    expect(blind.appearance).toBe(0);
  });

  it("a truncated state frame in the states cache: moved aside and recomputed, the same self-score", async () => {
    const candidate = writeCalibrationCandidate(task, path.join(dir, "damaged-cache"), "reference");
    const before = await check(candidate);
    const frame = before.video.states[0]!.framePath;
    fs.truncateSync(frame, 300);
    const after = await check(candidate);
    expect(after.video.error).toBeUndefined();
    expect(after.selfScore).toBe(before.selfScore);
    expect(fs.existsSync(`${frame}.corrupt`)).toBe(true);
  });

  it("a state frame that cannot be measured: the video error names the file, never an unhandled rejection", async () => {
    const candidate = writeCalibrationCandidate(task, path.join(dir, "unmeasurable"), "reference");
    const states = (await check(candidate)).video.states;
    const frames = states.map((state) => fs.readFileSync(state.framePath));
    // The metric fails on the video's frames only (as a decoder would on a bad file), while the page replays.
    const failing: VisualMetric = {
      ...metric,
      features: async (image) => {
        if (frames.some((frame) => frame.equals(image))) throw new Error("vipspng: libpng read error");
        return metric.features(image);
      },
    };
    const record = await runSelfCheck({
      inputs: task.inputs,
      actions: task.truth.actions.map(replayActionOf),
      trajectory: "given",
      candidateDir: candidate,
      metric: failing,
      statesCacheDir: path.join(dir, "states"),
      hostTimeouts: { navigationMs: 4_000 },
    });
    expect(record.video.error?.code).toBe("MEDIA");
    expect(record.video.error?.message).toContain(states[0]!.framePath);
    expect(record.video.error?.message).toContain("libpng read error");
    expect(record.findings.some((finding) => finding.kind === "video" && finding.message.includes(states[0]!.framePath))).toBe(true);
    expect(record.steps.length).toBe(task.truth.actions.length);
  });

  it("a page that never finishes its script is a finding", async () => {
    const candidate = writeCandidate(path.join(dir, "hung", String(TASK_ID), "m"), "<!doctype html><body><script>while (true) {}</script></body>");
    const hung = await check(candidate);
    expect(hung.page.error?.code).toBe("PAGE_TIMEOUT");
    expect(hung.steps.every((step) => !step.executed)).toBe(true);
    expect(hung.selfScore).toBeLessThan(0.2);
  });
});
