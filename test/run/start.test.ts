/**
 * `iwr start`, the main job, end to end on a small recorded task: validation, then
 * single-pass generation against a local OpenAI-compatible server, the fixed evaluator
 * on the answer, and the calibration of reference and blank pages. The scripted
 * server answers with the task's true page (a fixture, not a result): the pipeline
 * must carry it through post-processing and replay to full marks.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { shutdownVisualScorers } from "../../src/evaluator/metrics/index.ts";
import { recordTask, type RecordedTask } from "../../src/recorder/record-task.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { runStart } from "../../src/run/start.ts";
import { messageParts, startOpenAIServer, type FakeOpenAIServer } from "../support/openai-server.ts";
import { RECORDER_SCRIPT } from "../support/recorder-fixtures.ts";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-start-"));
const data = path.join(scratch, "suite.jsonl");
let recorded: RecordedTask;
let server: FakeOpenAIServer;

beforeAll(async () => {
  recorded = await recordTask({
    script: RECORDER_SCRIPT,
    data,
    pacing: { pauseBeforeMs: 100, pauseAfterMs: 600, pointerTravelMs: 50, keystrokeMs: 10 },
  });
  const truePage = fs.readFileSync(path.join(recorded.dir, "reference", "index.html"), "utf8");
  server = await startOpenAIServer({ reply: () => ({ text: `Here is the page.\n\`\`\`html\n${truePage}\n\`\`\`\n` }) });
});

afterAll(async () => {
  await server?.close();
  await shutdownVisualScorers();
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe("iwr start", () => {
  it("generates, evaluates and calibrates the task set into a fresh run folder", async () => {
    const runDir = path.join(scratch, "run");
    const code = await runStart({ data, runDir, workers: 1, model: "fake-vlm", baseURL: server.baseURL });
    expect(code).toBe(0);

    // One generation request: the prompt, then the sheet, then the frames.
    const requests = server.chatRequests();
    expect(requests).toHaveLength(1);
    const parts = messageParts(requests[0]!);
    expect(parts[0]?.type).toBe("text");
    expect(parts.filter((part) => part.type === "image_url").length).toBeGreaterThanOrEqual(1 + Math.floor(recorded.videoSec));

    const taskDir = path.join(runDir, "results", String(recorded.id), "fake-vlm");
    expect(fs.readFileSync(path.join(taskDir, "index.html"), "utf8")).not.toContain("__PLACEHOLDER_ASSETS_BASE_DIR__");
    const record = readEvalRecord(path.join(taskDir, "eval.json"));
    expect(record.scores.ifs).toBe(1);
    expect(record.settings.assertionJudgeKind).toBe("heuristic");
    expect(fs.existsSync(path.join(runDir, "results", "reports", "fake-vlm_metrics.md"))).toBe(true);

    const calibration = fs.readFileSync(path.join(runDir, "calibration.md"), "utf8");
    expect(calibration).toContain("All calibration targets met.");
    expect(calibration).toMatch(/\| 1 \| fixture:recorder-site \| 3 \| 100\.00 \|/);
  });

  it("refuses a run folder that already holds results", async () => {
    const code = await runStart({ data, runDir: path.join(scratch, "run"), workers: 1 });
    expect(code).toBe(1);
  });
});
