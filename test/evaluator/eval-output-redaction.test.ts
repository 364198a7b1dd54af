/** Secrets that reach a judge reply, an error message or a model detail never reach eval.json or the report. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEvalRecord, type EvalSettings, readEvalRecord, writeEvalRecord } from "../../src/evaluator/eval-record.ts";
import { writeMetricsReport } from "../../src/evaluator/report-md.ts";
import { REDACTED, registerSecret } from "../../src/log/redact.ts";

const OPENAI_STYLE_KEY = "sk-proj-AbCdEf0123456789xyz";
/** Looks like nothing in particular: only registration can catch it. */
const REGISTERED_SECRET = "hunter2-local-gateway-7731";

const settings: Omit<EvalSettings, "pairingMode" | "source"> = {
  assertionJudgeKind: "model",
  assertionJudgeModel: `judge-at-${REGISTERED_SECRET}`,
  groundingKind: "model",
  groundingModel: "gpt-4o",
  ocrEngine: "tesseract.js",
  ocrEngineVersion: "7.0.0",
  ocrEngineDetail: "eng",
  visualMetric: "ssim-gray-256",
  dinoStatus: "unavailable: no model",
  mllmJudgeKind: "model",
  mllmJudgeModel: "gpt-4o",
  protocol: "corrected",
  promptHashes: {},
};

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-eval-redaction-"));
  registerSecret(REGISTERED_SECRET);
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function leakyRecord() {
  return buildEvalRecord({
    taskId: 3,
    model: "Org/Model",
    totalSteps: 1,
    executedSteps: 1,
    successStep: 1,
    stopReason: { code: "MODEL", message: `401 from the gateway: key ${OPENAI_STYLE_KEY} rejected (${REGISTERED_SECRET})` },
    assertions: [{ actionIndex: 0, assertion: "the cart shows 1", result: "Yes", reply: `{"think":"saw ${OPENAI_STYLE_KEY}","result":"Yes"}` }],
    steps: [
      {
        position: 0,
        actionIndex: null,
        evalpoint: 0,
        evalpointPath: "e/0.png",
        checkpointPath: "c/step_0.png",
        ocr: 0.5,
        dino: 0.5,
        mllm: 50,
        checkpointText: "",
        screenshotText: "",
        judgeReply: `Score: 50. Authorization: Bearer ${REGISTERED_SECRET} and ${OPENAI_STYLE_KEY}`,
        judgeParsed: true,
      },
    ],
    pairing: { mode: "official", truncated: [] },
    settings,
  });
}

describe("redaction of evaluation outputs", () => {
  it("eval.json keeps the replies and numbers but not the keys", () => {
    const file = path.join(root, "3", "org__model", "eval.json");
    writeEvalRecord(file, leakyRecord());
    const text = fs.readFileSync(file, "utf8");
    expect(text).not.toContain(OPENAI_STYLE_KEY);
    expect(text).not.toContain(REGISTERED_SECRET);
    expect(text).toContain(REDACTED);
    // Only the secrets are masked: the record still reads back, with its scores and the rest of each reply.
    const back = readEvalRecord(file);
    expect(back.steps[0]?.judgeReply).toMatch(/^Score: 50\./);
    expect(back.scores.countedSteps).toBe(1);
    expect(back.stopReason?.message).toMatch(/^401 from the gateway/);
  });

  it("the metrics report does not print a secret that is part of a model detail", () => {
    const record = leakyRecord();
    const file = writeMetricsReport(root, "Org/Model", [{ taskId: record.taskId, scores: record.scores, settings: record.settings }]);
    const text = fs.readFileSync(file, "utf8");
    expect(text).not.toContain(REGISTERED_SECRET);
    expect(text).toContain(`assertionJudgeModel: judge-at-${REDACTED}`);
  });
});
