/**
 * The last differences from the published harness, each stated as the harness's own
 * behaviour (its assertion_scorer.py, visual_scorer.py and evaluate.py, read, never run):
 *
 * 1. the judge-reply parse, on replies where Python's rules differ from JavaScript's (JSON
 *    that is not an object, NaN and Infinity, str.strip() against trim(), slicing by
 *    character);
 * 2. OCR text similarity in characters (code points), as python-Levenshtein counts a str;
 * 3. a whitespace-only assertion, which the harness judges;
 * 4. the averages evaluate.py writes into eval.json beside the lists.
 *
 * The harness column of the reply table is the harness's verdict read from its code, each
 * step checked against Python's documented behaviour (the probes are in the comments).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { distance } from "fastest-levenshtein";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeCalibrationCandidate } from "../../src/calibration/calibration.ts";
import { closeEvaluator, createEvaluator } from "../../src/evaluator/create-evaluator.ts";
import { buildEvalRecord, readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { evaluateTask } from "../../src/evaluator/evaluate-task.ts";
import { parseJudgeReply, parseJudgeReplyAsHarness } from "../../src/evaluator/judge/parse-reply.ts";
import type { AssertionInput, AssertionJudge } from "../../src/evaluator/judge/types.ts";
import { AssertionQueue } from "../../src/evaluator/judge-queue.ts";
import { pythonJsonLoads, pythonSliceDropLast, pythonStrip, pythonSum } from "../../src/evaluator/python-rules.ts";
import type { VisualStep } from "../../src/evaluator/visual-step.ts";
import { characterEditDistance, textSimilarity } from "../../src/metrics/text-similarity.ts";
import { PROFILE_RULES } from "../../src/protocol.ts";
import { candidateFiles } from "../../src/results/layout.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Action, Task } from "../../src/tasks/schema.ts";

type Verdict = "Yes" | "No" | "Error";
const verdictOf = (parsed: { result: "Yes" | "No" } | undefined): Verdict => parsed?.result ?? "Error";

/**
 * Twelve replies a judge model can send where the two languages' rules part, with the
 * verdict the harness reaches (its parse: strip(); the first ```json or ``` block, else the
 * whole text; json.loads; .get("result") in ["Yes", "No"]; on any exception inside that
 * try, "Yes" in the reply, then "No") and the verdict our corrected profile reaches.
 */
const AWKWARD_REPLIES: ReadonlyArray<{ name: string; reply: string; harness: Verdict; corrected: Verdict }> = [
  // json.loads gives a str; str has no .get → AttributeError inside the try → substring rule.
  { name: "a JSON string", reply: '"Yes"', harness: "Yes", corrected: "Yes" },
  // A list has no .get either → substring rule: no "Yes", a "No".
  { name: "a JSON list of the object", reply: '[{"result": "No"}]', harness: "No", corrected: "No" },
  // json.loads('... NaN ...') parses (Python's constants) → the result "No", not the "Yes" of the thinking.
  {
    name: "NaN in the object",
    reply: '{"think": "Yes, a row was added, but it is the wrong one", "confidence": NaN, "result": "No"}',
    harness: "No",
    corrected: "No",
  },
  {
    name: "-Infinity in a fenced object",
    reply: '```json\n{"think": "Yes, the total moved", "margin": -Infinity, "result": "No"}\n```',
    harness: "No",
    corrected: "No",
  },
  // strip() keeps U+FEFF; json.loads refuses a BOM ("Unexpected UTF-8 BOM") → substring rule → "Yes".
  { name: "a leading byte-order mark", reply: '\uFEFF{"think": "Yes, the menu opened, on the wrong item", "result": "No"}', harness: "Yes", corrected: "No" },
  // strip() removes U+001F (trim() keeps it) → json.loads parses → "No".
  { name: "a trailing U+001F", reply: '{"think": "Yes, it scrolled, not far enough", "result": "No"}\u001F', harness: "No", corrected: "No" },
  // strip() removes U+0085 (trim() keeps it) → "No".
  { name: "a trailing U+0085", reply: '{"think": "Yes, the dialog closed, the list did not", "result": "No"}\u0085', harness: "No", corrected: "No" },
  // No closing fence: text[start:-1] drops the last character, the whole emoji → the object parses → "No".
  {
    name: "an unclosed fence ending in an emoji",
    reply: '```json\n{"think": "Yes, a badge, with the wrong count", "result": "No"}👍',
    harness: "No",
    corrected: "No",
  },
  // json.loads("null") is None; None.get fails → substring rule: neither word → "Error".
  { name: "JSON null", reply: "null", harness: "Error", corrected: "Error" },
  // A dict whose result is not exactly "Yes" or "No" → "Error" (no substring rule).
  { name: "a lower-case result", reply: '{"result": "yes"}', harness: "Error", corrected: "Yes" },
  { name: "a list as the result", reply: '{"think": "No change at all", "result": ["Yes"]}', harness: "Error", corrected: "Error" },
  // Not JSON → substring rule, case-sensitive: "Yes" anywhere wins over the "No" of "Not".
  { name: "prose", reply: "Not visible at first: Yes, partially", harness: "Yes", corrected: "Yes" },
];

describe("judge-reply parse: official reads every awkward reply as the harness's assertion_scorer.py does", () => {
  it.each(AWKWARD_REPLIES)("$name: the harness reads $harness", ({ reply, harness }) => {
    expect(verdictOf(parseJudgeReplyAsHarness(reply))).toBe(harness);
  });

  it.each(AWKWARD_REPLIES)("$name: corrected (our own parse) reads $corrected", ({ reply, corrected }) => {
    expect(verdictOf(parseJudgeReply(reply))).toBe(corrected);
  });

  it("keeps the thinking of a parsed object, as the harness records .get('think')", () => {
    expect(parseJudgeReplyAsHarness('{"think": "the row is there", "score": Infinity, "result": "Yes"}')).toEqual({
      result: "Yes",
      think: "the row is there",
      via: "json",
    });
  });
});

describe("Python's rules the harness's parse depends on", () => {
  it("str.strip() removes U+001C–U+001F, U+0085 and the Unicode spaces, and keeps U+FEFF (trim() does the opposite for these)", () => {
    expect(pythonStrip("\u001C\u001D\u001E\u001F x \u0085\u00A0\u3000")).toBe("x");
    expect(pythonStrip("\uFEFF x \uFEFF")).toBe("\uFEFF x \uFEFF");
    expect(pythonStrip("\u2028\t\n\u000B\u000C\r y \u205F")).toBe("y");
    expect(pythonStrip("   ")).toBe("");
  });

  it("json.loads accepts NaN, Infinity and -Infinity only where a value stands, and never inside strings", () => {
    expect(pythonJsonLoads('{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN"}')).toEqual({ ok: true, value: { a: null, b: [null, null], c: "NaN" } });
    expect(pythonJsonLoads('"say \\"NaN\\" twice"')).toEqual({ ok: true, value: 'say "NaN" twice' });
    for (const refused of ["-NaN", "nan", "- Infinity", "+Infinity", "NaNx", "{NaN: 1}", "[1 NaN]", "\uFEFF{}", "{'a': 1}", "[1,]"]) {
      expect(pythonJsonLoads(refused), refused).toEqual({ ok: false });
    }
  });

  it("text[start:-1] drops the last character whole, an astral one too", () => {
    expect(pythonSliceDropLast("abc😀", 1)).toBe("bc");
    expect(pythonSliceDropLast("abcd", 1)).toBe("bc");
    expect(pythonSliceDropLast("a", 1)).toBe("");
  });
});

describe("OCR similarity counts characters (code points), as python-Levenshtein does on a str", () => {
  // Each case: the value over code points (the harness's), and what counting UTF-16 units gave.
  const cases: ReadonlyArray<[string, string, number, number]> = [
    // One emoji swapped for another: 1 edit in 13 characters (UTF-16: 1 in 14, the emojis share their first unit).
    ["Add 😀 to cart", "Add 🛒 to cart", 1 - 1 / 13, 1 - 1 / 14],
    // Emojis with different first units: 1 edit in 9 characters (UTF-16: 2 in 10).
    ["Level 3 🏆", "Level 3 🥇", 1 - 1 / 9, 1 - 2 / 10],
    // An emoji added: 1 edit in 2 characters (UTF-16: 2 in 3).
    ["a👍", "a", 1 - 1 / 2, 1 - 2 / 3],
    // A mathematical bold capital lower-cases to itself: 1 edit in 8 (UTF-16: 2 in 9).
    ["Total 𝐀B", "total ab", 1 - 1 / 8, 1 - 2 / 9],
  ];
  it.each(cases)("%s ~ %s: %f (UTF-16 units would give %f)", (a, b, codePoints, codeUnits) => {
    expect(textSimilarity(a, b)).toBeCloseTo(codePoints, 12);
    // The case tells the two counts apart: the same formula over UTF-16 units gives the other value.
    const [left, right] = [a.toLowerCase(), b.toLowerCase()];
    const overUnits = 1 - distance(left, right) / Math.max(left.length, right.length);
    expect(overUnits).toBeCloseTo(codeUnits, 12);
    expect(overUnits).not.toBeCloseTo(codePoints, 4);
  });

  it("the array measure (used past 65,536 distinct characters) agrees with the bit-parallel one", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const text = (length: number) => Array.from({ length }, () => "abcdé😀"[Math.floor(random() * 6)]).join("");
    for (let round = 0; round < 50; round++) {
      const [a, b] = [text(Math.floor(random() * 30)), text(Math.floor(random() * 30))];
      const recoded = (value: string) => Array.from(value, (char) => (char === "😀" ? "z" : char)).join("");
      expect(characterEditDistance(Array.from(a), Array.from(b)), `${a} ~ ${b}`).toBe(distance(recoded(a), recoded(b)));
    }
  });

  it("texts in the Basic Multilingual Plane are unchanged: 'kitten' ~ 'sitting', accents, CJK", () => {
    expect(textSimilarity("kitten", "sitting")).toBeCloseTo(1 - 3 / 7, 12);
    expect(textSimilarity("Café Crème", "cafe creme")).toBeCloseTo(1 - 2 / 10, 12);
    expect(textSimilarity("購物車", "購物")).toBeCloseTo(1 - 1 / 3, 12);
  });
});

/** A judge that says Yes and records what it was asked. */
function recordingJudge(): AssertionJudge & { asked: string[] } {
  const asked: string[] = [];
  return {
    kind: "heuristic",
    promptHashes: {},
    asked,
    async judge(input: AssertionInput) {
      asked.push(input.assertion);
      return { result: "Yes", replies: [], attempts: 1, latencyMs: 0 };
    },
  };
}

function actionWith(assertion: string): Action {
  return { type: "Click", parameters: { description: "the button" }, logical_assertion: assertion, visual_evaluation_flag: false } as Action;
}

describe("a whitespace-only assertion", () => {
  const actions = [actionWith("The total reads 3"), actionWith(" \t "), actionWith("")];
  const shot = Buffer.from("png");
  const judgeAll = async (rule: "judged" | "skipped") => {
    const judge = recordingJudge();
    const queue = new AssertionQueue(judge, actions, 1, rule);
    for (let index = 0; index <= actions.length; index++) queue.onEvalpoint(index, shot);
    return { asked: judge.asked, settled: (await queue.settled()).map((outcome) => outcome.actionIndex) };
  };

  it("is judged under official, as the harness judges any non-empty assertion string (`if assertion`)", async () => {
    expect(PROFILE_RULES.official.blankAssertion).toBe("judged");
    expect(await judgeAll(PROFILE_RULES.official.blankAssertion)).toEqual({ asked: ["The total reads 3", " \t "], settled: [0, 1] });
  });

  it("is skipped under corrected, like an empty one (it states nothing to check)", async () => {
    expect(PROFILE_RULES.corrected.blankAssertion).toBe("skipped");
    expect(await judgeAll(PROFILE_RULES.corrected.blankAssertion)).toEqual({ asked: ["The total reads 3"], settled: [0] });
  });
});

function step(position: number, ocr: number, dino: number, mllm: number): VisualStep {
  return {
    position,
    actionIndex: position === 0 ? null : position - 1,
    evalpoint: position,
    evalpointPath: `evalpoints/${position}.png`,
    checkpointPath: `checkpoints/step_${position}.png`,
    ocr,
    dino,
    mllm,
    checkpointText: "",
    screenshotText: "",
    judgeReply: "",
    judgeParsed: true,
  };
}

const SETTINGS = {
  assertionJudgeKind: "heuristic",
  assertionJudgeModel: "none",
  groundingKind: "heuristic",
  groundingModel: "none",
  ocrEngine: "tesseract.js",
  ocrEngineVersion: "x",
  ocrEngineDetail: "x",
  visualMetric: "ssim-gray-256",
  dinoStatus: "unavailable: test",
  mllmJudgeKind: "offline-proxy" as const,
  mllmJudgeModel: "none",
  protocol: "official" as const,
  promptHashes: {},
};

describe("eval.json's averages, as evaluate.py writes them", () => {
  it("all_avg_scores, mllm_score, dino_score, ocr_score, avg_score over the untruncated lists, MLLM on 0–1", () => {
    const record = buildEvalRecord({
      taskId: 1,
      model: "m",
      totalSteps: 3,
      executedSteps: 1,
      successStep: 1,
      assertions: [],
      steps: [step(0, 0.5, 0.25, 100), step(1, 1, 0.5, 25)],
      // An entry past the success_step + 1 cut: the harness scores it and averages it in.
      cutSteps: [step(2, 0.25, 0.75, 50)],
      pairing: { truncated: [{ position: 2, actionIndex: 1, evalpoint: 2, evalpointPath: "", checkpointPath: "" }], mode: "official" },
      settings: SETTINGS,
    });
    // Values chosen to be exact in binary: every sum below is exact, however it is added.
    expect(record.all_mllm_scores).toEqual([1, 0.25, 0.5]);
    expect(record.all_avg_scores).toEqual([(1 + 0.25 + 0.5) / 3, (0.25 + 0.5 + 1) / 3, (0.5 + 0.75 + 0.25) / 3]);
    expect(record.mllm_score).toBe(1.75 / 3);
    expect(record.dino_score).toBe(1.5 / 3);
    expect(record.ocr_score).toBe(1.75 / 3);
    expect(record.avg_score).toBe((1.75 + 1.75 + 1.5) / 3 / 3);
    // Our own scores still follow §3.6 (the cut entry does not count).
    expect(record.scores.ocrMean).toBe(0.75);
    // The harness's key order: the averages sit between the lists and the replies.
    const keys = Object.keys(record);
    expect(keys.slice(keys.indexOf("all_ocr_scores"), keys.indexOf("all_mllm_res") + 1)).toEqual([
      "all_ocr_scores",
      "all_avg_scores",
      "mllm_score",
      "dino_score",
      "ocr_score",
      "avg_score",
      "all_mllm_res",
    ]);
  });

  it("empty lists give [] and 0, as `... if list else 0` does", () => {
    const record = buildEvalRecord({
      taskId: 1,
      model: "m",
      totalSteps: 2,
      executedSteps: 0,
      successStep: 0,
      assertions: [],
      steps: [],
      pairing: { truncated: [], mode: "official" },
      settings: SETTINGS,
    });
    expect([record.all_avg_scores, record.mllm_score, record.dino_score, record.ocr_score, record.avg_score]).toEqual([[], 0, 0, 0, 0]);
  });

  it("sums as Python 3.12's sum() does (compensated): sum([0.1] * 10) is 1.0, sum([1e100, 1.0, -1e100]) is 1.0", () => {
    expect(pythonSum(Array.from({ length: 10 }, () => 0.1))).toBe(1);
    expect(Array.from({ length: 10 }, () => 0.1).reduce((a, b) => a + b, 0)).not.toBe(1);
    expect(pythonSum([1e100, 1.0, -1e100])).toBe(1);
    expect(pythonSum([])).toBe(0);
  });
});

describe("a real official evaluation of a bundled task's true page", () => {
  let scratch: string;
  let task: Task;
  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-parity-"));
    const original = (await loadTasks("tasks/iwr-mini.jsonl")).find((candidate) => candidate.id === 2)!;
    // The same task with its second action's assertion made of whitespace alone.
    const line = {
      ...original.line,
      action_sequence: original.line.action_sequence.map((action, index) => (index === 1 ? { ...action, logical_assertion: "  \t " } : action)),
    };
    const setDir = path.join(scratch, "set");
    fs.cpSync(original.dir, path.join(setDir, "2"), { recursive: true });
    fs.writeFileSync(path.join(scratch, "set.jsonl"), `${JSON.stringify(line)}\n`);
    task = (await loadTasks(path.join(scratch, "set.jsonl")))[0]!;
  });
  afterAll(async () => {
    await closeEvaluator();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it("judges the whitespace-only assertion and writes evaluate.py's averages, consistent with its lists", async () => {
    const evaluator = await createEvaluator({ profile: "official", judge: "heuristic", grounding: "heuristic", trace: false });
    const candidateDir = writeCalibrationCandidate(task, path.join(scratch, "results"), "reference");
    await evaluateTask({ task, candidateDir, model: "reference", pairingModes: ["official"], evaluator, calibration: true });
    const record = readEvalRecord(candidateFiles(candidateDir).eval);
    expect(record.assertion_results?.[1]).toMatchObject({ assertion: "  \t " });
    expect(record.assertions.map((entry) => entry.actionIndex)).toContain(1);
    const mllm = record.all_mllm_scores!;
    const dino = record.all_dino_scores!;
    const ocr = record.all_ocr_scores!;
    expect(mllm.length).toBeGreaterThan(1);
    const meanOf = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    expect(record.all_avg_scores).toHaveLength(mllm.length);
    expect(record.all_avg_scores).toEqual(mllm.map((value, index) => (value + dino[index]! + ocr[index]!) / 3));
    expect(record.mllm_score).toBeCloseTo(meanOf(mllm), 14);
    expect(record.dino_score).toBeCloseTo(meanOf(dino), 14);
    expect(record.ocr_score).toBeCloseTo(meanOf(ocr), 14);
    expect(record.avg_score).toBeCloseTo(meanOf(record.all_avg_scores!), 14);
  }, 180_000);
});
