/**
 * The stepped clock (#30, checkpoints of a page that never rests): a canvas of balls
 * moving every animation frame, recoloured at random when two touch, and a ring moved by
 * keys, is recorded under the stepped clock because the preflight sees it never come to
 * rest. Two recordings give the same pictures byte for byte, and the corrected profile's
 * replay of the reference page takes exactly the checkpoints; the official profile keeps
 * the harness's fixed waits (no stepped clock). The rule that picks the clock and the
 * task line's plan are checked on their own as well.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import type { SettleRecord } from "../../src/browser/settle.ts";
import { startStaticServer } from "../../src/browser/static-server.ts";
import { keepsMovingOnItsOwn } from "../../src/browser/stepped-clock.ts";
import { writeCalibrationCandidate } from "../../src/calibration/calibration.ts";
import { closeEvaluator } from "../../src/evaluator/create-evaluator.ts";
import { replayDeterminism } from "../../src/evaluator/evaluate-task.ts";
import { preflightSite } from "../../src/recorder/preflight.ts";
import type { RecordedTask } from "../../src/recorder/record-task.ts";
import { recordingClock } from "../../src/recorder/recording-clock.ts";
import { type Task, TaskLineSchema } from "../../src/tasks/schema.ts";
import { makeScratchDir, recordOnePageSite } from "../support/recorder-fixtures.ts";
import { evalpointPixels, pixelsOf, scoreCandidate } from "../support/score-candidate.ts";

const QUICK = { pauseBeforeMs: 200, pauseAfterMs: 700, pointerTravelMs: 40, keystrokeMs: 5 };
const scratch = makeScratchDir("stepped-clock");

/** Balls that never stop, colours drawn at random on contact, a ring that keys move. */
const BALLS_PAGE = `<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; background: #111; color: #ddd; font-family: sans-serif; }
canvas { display: block; }
#label { position: absolute; right: 8px; top: 8px; font-size: 14px; }
</style></head><body>
<img src="img/logo.png" width="32" height="32" alt="logo" style="position: absolute; left: 8px; top: 8px">
<p id="label">Balls: 14</p>
<canvas id="board"></canvas>
<script>
  const canvas = document.getElementById("board");
  const ctx = canvas.getContext("2d");
  canvas.width = innerWidth; canvas.height = innerHeight;
  const rnd = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo));
  const colour = () => "rgb(" + rnd(40, 255) + "," + rnd(40, 255) + "," + rnd(40, 255) + ")";
  const balls = Array.from({ length: 14 }, () => ({ x: rnd(30, canvas.width - 30), y: rnd(30, canvas.height - 30),
    vx: rnd(-5, 6) || 3, vy: rnd(-5, 6) || -3, r: rnd(8, 18), c: colour() }));
  const ring = { x: 200, y: 200 };
  addEventListener("keydown", (event) => {
    if (event.key === "d") ring.x += 20;
    if (event.key === "s") ring.y += 20;
  });
  function frame() {
    ctx.fillStyle = "rgba(17, 17, 17, 0.3)";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    for (const ball of balls) {
      if (ball.x + ball.r >= canvas.width || ball.x - ball.r <= 0) ball.vx = -ball.vx;
      if (ball.y + ball.r >= canvas.height || ball.y - ball.r <= 0) ball.vy = -ball.vy;
      ball.x += ball.vx; ball.y += ball.vy;
      for (const other of balls) {
        if (other !== ball && Math.hypot(ball.x - other.x, ball.y - other.y) < ball.r + other.r) ball.c = other.c = colour();
      }
      ctx.beginPath(); ctx.fillStyle = ball.c; ctx.arc(ball.x, ball.y, ball.r, 0, 2 * Math.PI); ctx.fill();
    }
    ctx.beginPath(); ctx.strokeStyle = "#fff"; ctx.lineWidth = 3; ctx.arc(ring.x, ring.y, 10, 0, 2 * Math.PI); ctx.stroke();
    requestAnimationFrame(frame);
  }
  frame();
</script></body></html>`;

const SCRIPT = {
  source_website: "fixture:endless-balls",
  classification: { interaction_complexity: "L2", visual_complexity: "V2", domain: "testing" },
  resolution: "640x480",
  actions: [
    { type: "Press", key: "d", description: "press d", assertion: "The ring moves right", visual: true },
    { type: "Press", key: "s", description: "press s", assertion: "The ring moves down", visual: true },
    { type: "Press", key: "d", description: "press d again", assertion: "The ring moves right again", visual: true },
  ],
};

function recordBalls(label: string, clock: "auto" | "shifted" = "auto"): Promise<{ recorded: RecordedTask; task: Task }> {
  return recordOnePageSite(scratch, label, { html: BALLS_PAGE, logoColour: "#2563eb", script: SCRIPT, pacing: QUICK, clock });
}

let first: { recorded: RecordedTask; task: Task };

beforeAll(async () => {
  first = await recordBalls("first");
});

afterAll(async () => {
  await closeEvaluator();
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe("a page that never rests, recorded and replayed under the stepped clock", () => {
  it("is recorded under the stepped clock, the task line giving how far it went before and after each action", () => {
    // In whole 16 ms frames: the fixed waits (1 s, 0.5 s), the 200 ms pause before each key, and
    // before each later one the rest of the 700 ms "after" pause of the one before (700 - 496 → 208).
    const plan = first.recorded.line.determinism?.stepped_clock;
    expect(plan).toEqual({ open_ms: 1008, before_action_ms: [208, 416, 416], after_action_ms: [496, 496, 496] });
    expect(first.task.truth.determinism?.steppedClock).toEqual({ openMs: 1008, beforeActionMs: [208, 416, 416], afterActionMs: [496, 496, 496] });
    const notes = JSON.parse(fs.readFileSync(path.join(first.recorded.dir, "recording.json"), "utf8"));
    expect(notes.determinism.clock).toBe("stepped");
    expect(notes.determinism.clockWhy).toMatch(/never came to rest/);
  });

  it("records the same pictures twice, byte for byte, the balls moving between them", async () => {
    const [start, afterFirstKey] = first.task.truth.checkpointPaths;
    expect((await pixelsOf(afterFirstKey!)).equals(await pixelsOf(start!)), "step_0 and step_1").toBe(false);
    const again = await recordBalls("again");
    expect(again.recorded.line.determinism).toEqual(first.recorded.line.determinism);
    for (const [index, checkpoint] of first.task.truth.checkpointPaths.entries()) {
      expect((await pixelsOf(again.task.truth.checkpointPaths[index]!)).equals(await pixelsOf(checkpoint)), `step_${index}`).toBe(true);
    }
  });

  it("replays the reference page to exactly its checkpoints under the corrected profile", async () => {
    const candidateDir = writeCalibrationCandidate(first.task, path.join(scratch, "results"), "reference");
    const record = await scoreCandidate(first.task, candidateDir, "reference");
    expect(record.determinism).toMatchObject({ seeded: true, steppedClock: true, reason: expect.stringMatching(/stepped clock/) });
    for (const [index, checkpoint] of first.task.truth.checkpointPaths.entries()) {
      expect((await evalpointPixels(candidateDir, index)).equals(await pixelsOf(checkpoint)), `evalpoint ${index} against step_${index}`).toBe(true);
    }
  });

  it("is recorded under the shifted clock when asked, the line naming no stepped clock", async () => {
    const shifted = await recordBalls("shifted", "shifted");
    expect(shifted.recorded.line.determinism).toEqual({ random_seed: 20_240_601, clock_start: "2025-01-15T09:00:00.000Z" });
    const notes = JSON.parse(fs.readFileSync(path.join(shifted.recorded.dir, "recording.json"), "utf8"));
    expect(notes.determinism).toMatchObject({ clock: "shifted", clockWhy: "asked for (shifted)" });
  });

  it("keeps the official profile's fixed waits: real timers there, so the balls run on between screenshots", async () => {
    expect(replayDeterminism(first.task, "official", true)).toMatchObject({ seeded: true, reason: expect.stringMatching(/seed and clock start/) });
    expect(replayDeterminism(first.task, "official", true).steppedClock).toBeUndefined();
    const candidateDir = writeCalibrationCandidate(first.task, path.join(scratch, "official-results"), "reference");
    const record = await scoreCandidate(first.task, candidateDir, "reference", "official");
    expect(record.determinism?.steppedClock).toBeUndefined();
    // A paused clock the replay never advanced would leave the canvas at its first frame in every screenshot.
    const evalpoint = (index: number) => evalpointPixels(candidateDir, index);
    expect((await evalpoint(1)).equals(await evalpoint(0))).toBe(false);
    expect((await evalpoint(1)).equals(await pixelsOf(first.task.truth.checkpointPaths[1]!))).toBe(false);
  });
});

describe("choosing the clock", () => {
  const settle = (fields: Partial<SettleRecord>): SettleRecord => ({ waitedMs: 5000, atRest: false, stillGoing: ["the screen kept changing"], ...fields });

  it("steps the clock only for a page still moving at the bound with nothing left loading", () => {
    expect(keepsMovingOnItsOwn(settle({ keptMoving: true, stillLoading: false }))).toBe(true);
    // Still loading: it comes to rest once loaded.
    expect(keepsMovingOnItsOwn(settle({ keptMoving: true, stillLoading: true }))).toBe(false);
    // At the bound only because the quiet window had not closed yet.
    expect(keepsMovingOnItsOwn(settle({ keptMoving: false, stillLoading: false }))).toBe(false);
    expect(keepsMovingOnItsOwn({ waitedMs: 1200, atRest: true, stillGoing: [] })).toBe(false);
  });

  it("steps the clock when that brings the moving page to rest, follows an explicit choice, and says why", () => {
    const moving = settle({ keptMoving: true, stillLoading: false });
    const rested: SettleRecord = { waitedMs: 600, atRest: true, stillGoing: [] };
    expect(recordingClock("shifted", moving, rested)).toEqual({ clock: "shifted", why: "asked for (shifted)" });
    expect(recordingClock("auto", moving, rested)).toMatchObject({ clock: "stepped", why: expect.stringMatching(/under the stepped clock it came to rest/) });
    // Still moving with the page's own time paused: what moves keeps real time (CSS, video).
    expect(recordingClock("auto", moving, moving)).toMatchObject({ clock: "shifted", why: expect.stringMatching(/did not bring it to rest either/) });
    expect(recordingClock("auto", rested)).toEqual({ clock: "shifted", why: "the opened page came to rest" });
    // No second look (it failed), or a second look still loading: not the stepped clock, and said why.
    expect(recordingClock("auto", moving)).toMatchObject({ clock: "shifted", why: expect.stringMatching(/could not be tried/) });
    const loading = settle({ keptMoving: true, stillLoading: true, stillGoing: ["1 request was in flight"] });
    expect(recordingClock("auto", moving, loading)).toMatchObject({ clock: "shifted", why: expect.stringMatching(/still loading at the bound \(1 request/) });
  });

  it("leaves an endless CSS animation under the shifted clock: stepping the page's time does not stop it", async () => {
    const siteDir = fs.mkdtempSync(path.join(scratch, "spinner-"));
    const spinner = `<!doctype html><html><head><style>
      @keyframes turn { to { transform: rotate(360deg); } }
      #spinner { width: 80px; height: 80px; margin: 60px; border: 8px solid #ddd; border-top-color: #2563eb; border-radius: 50%;
        animation: turn 0.9s linear infinite; }
    </style></head><body><div id="spinner"></div></body></html>`;
    fs.writeFileSync(path.join(siteDir, "index.html"), spinner);
    const server = await startStaticServer(siteDir);
    try {
      const determinism = { randomSeed: 1, clockStartMs: Date.UTC(2025, 0, 15, 9) };
      const preflight = await preflightSite(server.url("index.html"), { width: 400, height: 300 }, determinism);
      expect(keepsMovingOnItsOwn(preflight.settle)).toBe(true);
      expect(keepsMovingOnItsOwn(preflight.steppedSettle!)).toBe(true);
      expect(recordingClock("auto", preflight.settle, preflight.steppedSettle).clock).toBe("shifted");
    } finally {
      await server.close();
    }
  });

  it("refuses a plan whose lists do not hold one entry per action", () => {
    const line = {
      ...first.recorded.line,
      determinism: { ...first.recorded.line.determinism!, stepped_clock: { open_ms: 1008, before_action_ms: [16], after_action_ms: [496, 496, 496] } },
    };
    const parsed = TaskLineSchema.safeParse(line);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/before_action_ms must hold one entry per action \(3\), got 1/);
  });
});
