/**
 * Issue #14, the official profile's pure rules, one parity check each: frames, the
 * image cap, reply post-processing, the per-model limits and the judge's parse.
 */
import { describe, expect, it } from "vitest";
import { parseJudgeReplyAsHarness } from "../../src/evaluator/judge/index.ts";
import { extractPageAsHarness, extractPageFromReply } from "../../src/generation/page-from-reply.ts";
import { planFrames } from "../../src/media/frames.ts";
import { frameBudget } from "../../src/media/images.ts";
import { harnessLimitsFor, loadModelSpec, withHarnessLimits } from "../../src/models/index.ts";
import { parseGroundingReplyAsHarness } from "../../src/replay/grounding/index.ts";

describe("frames (official: int(duration) at 1 fps, 64 evenly spaced above 64 s)", () => {
  it("a 10.5 s video gives 10 frames (corrected's ceiling gives 11)", () => {
    expect(planFrames(10.5, 1, 64, "floor").times).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(planFrames(10.5, 1, 64, "ceil").count).toBe(11);
    expect(planFrames(10, 1, 64, "floor").count).toBe(10);
    // int(0.5) = 0: the harness sends no frame of a video shorter than a second.
    expect(planFrames(0.5, 1, 64, "floor").count).toBe(0);
  });
  it("above the cap the frames are evenly spaced over the whole video, as soon as the duration exceeds it", () => {
    const plan = planFrames(64.5, 1, 64, "floor");
    expect(plan.count).toBe(64);
    expect(plan.times[1]).toBeCloseTo(64.5 / 64, 9);
    expect(planFrames(100, 1, 20, "floor").times.slice(0, 3)).toEqual([0, 5, 10]);
  });
});

describe("image cap (official: all sheets and no frames when the sheets alone exceed it)", () => {
  it("gives no frames instead of failing the task", () => {
    expect(frameBudget(72, { maxImages: 70, maxFrames: 64 }, "sheets-only")).toBe(0);
    expect(() => frameBudget(72, { maxImages: 70, maxFrames: 64 })).toThrow(/72 asset sheets exceed the model's image cap of 70/);
    expect(frameBudget(10, { maxImages: 70, maxFrames: 64 }, "sheets-only")).toBe(60);
  });
});

describe("reply post-processing (official: the fence needs its closing fence; every reply is written)", () => {
  const page = '<html><body><img src="__PLACEHOLDER_ASSETS_BASE_DIR__/001.png"></body></html>';
  it("takes a closed html block and resolves the placeholder", () => {
    expect(extractPageAsHarness(`Sure:\n\`\`\`html\n${page}\n\`\`\`\nDone.`, "../assets")).toBe('<html><body><img src="../assets/001.png"></body></html>');
  });
  it("keeps the whole reply when the fence is never closed (a reply cut at the token limit), minus the fence marks", () => {
    const cut = `Here is the page:\n\`\`\`html\n<html><body><p>half`;
    expect(extractPageAsHarness(cut, "a")).toBe("Here is the page:\n\n<html><body><p>half");
    // Corrected reads the open block to its end instead.
    expect(extractPageFromReply(cut, "a")).toBe("<html><body><p>half\n");
  });
  it("writes prose and empty replies as they are, and removes iframes", () => {
    expect(extractPageAsHarness("I cannot help with that.", "a")).toBe("I cannot help with that.");
    expect(extractPageAsHarness("", "a")).toBe("");
    expect(extractPageAsHarness('```html\n<div><iframe src="x"></iframe><iframe src="y"/></div>\n```', "a")).toBe("<div></div>");
    expect(() => extractPageFromReply("I cannot help with that.", "a")).toThrow(/no HTML/);
  });
});

describe("per-model limits (official: the harness's substring table)", () => {
  it("matches by substring of the lower-cased name, first entry first", () => {
    expect(harnessLimitsFor("Qwen2.5-VL-72B-Instruct")).toMatchObject({ key: "qwen", maxTokens: 4096, maxImages: 20, maxFrames: 20, timeoutMs: 300_000 });
    expect(harnessLimitsFor("claude-sonnet-4-20250514")).toMatchObject({ key: "claude", timeoutMs: 300_000, maxImageSide: 1000 });
    expect(harnessLimitsFor("gpt-4o-2024-05-13")).toMatchObject({ maxTokens: 4096 });
    expect(harnessLimitsFor("glm-4.5v")).toMatchObject({ maxTokens: 4096 });
    expect(harnessLimitsFor("gpt-4o")).toMatchObject({ key: "default", maxTokens: 16_384, maxImages: 70, maxFrames: 64 });
  });
  it("replaces a preset's own limits with the table's for its API model id", () => {
    // Our qwen3-vl preset allows 70 images and 16384 tokens; the harness gives any qwen 20 and 4096.
    const preset = loadModelSpec("qwen3-vl");
    expect(preset.maxImages).toBe(70);
    expect(withHarnessLimits(preset)).toMatchObject({ name: "qwen3-vl", maxTokens: 4096, maxImages: 20, maxFrames: 20, timeoutMs: 300_000 });
    expect(withHarnessLimits(loadModelSpec("claude-sonnet-4")).maxImageSide).toBe(1000);
    expect(withHarnessLimits(loadModelSpec("gpt-4o")).maxImageSide).toBeUndefined();
  });
});

describe("assertion reply parse (official: JSON, else the substring 'Yes' before 'No')", () => {
  it("reads JSON, fenced or bare, and only an exact Yes or No in it", () => {
    expect(parseJudgeReplyAsHarness('{"think": "ok", "result": "Yes"}')).toMatchObject({ result: "Yes", think: "ok" });
    expect(parseJudgeReplyAsHarness('```json\n{"result": "No"}\n```')).toMatchObject({ result: "No" });
    // Valid JSON with another result is no verdict (the harness's "Error"), not a word search.
    expect(parseJudgeReplyAsHarness('{"result": "yes"}')).toBeUndefined();
  });
  it("falls back to the substrings, Yes first and case-sensitive", () => {
    expect(parseJudgeReplyAsHarness("No, although Yes might be argued")?.result).toBe("Yes");
    expect(parseJudgeReplyAsHarness("Not at all")?.result).toBe("No");
    expect(parseJudgeReplyAsHarness("nothing changed")).toBeUndefined();
  });
});

describe('grounding reply parse (official: bare digits; Type as index,"text")', () => {
  it("takes bare digits only for a Click; -1 and prose go to the vision fallback", () => {
    expect(parseGroundingReplyAsHarness(" 12\n", "Click")).toEqual({ index: 12 });
    expect(parseGroundingReplyAsHarness("-1", "Click")).toBeUndefined();
    expect(parseGroundingReplyAsHarness("Element 12", "Click")).toBeUndefined();
    expect(parseGroundingReplyAsHarness("[12]", "Click")).toBeUndefined();
  });
  it('splits a Type reply at its first ," and strips the trailing quotes', () => {
    expect(parseGroundingReplyAsHarness('4,"wireless mouse"', "Type")).toEqual({ index: 4, text: "wireless mouse" });
    expect(parseGroundingReplyAsHarness('-1,""', "Type")).toBeUndefined();
    expect(parseGroundingReplyAsHarness("4, wireless mouse", "Type")).toBeUndefined();
  });
});
