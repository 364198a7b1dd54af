/**
 * §3.6 formulas against hand-computed expectations.
 */
import { describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { aggregateTask, averageScores, mean } from "../../src/evaluator/aggregate.ts";

describe("aggregateTask (§3.6)", () => {
  it("truncates every list to success_step + 1 entries, then applies the weights", () => {
    // success_step 2 of 4 → keep 3 entries of each list.
    // OCR (1 + .5 + .8)/3 = .766667; DINO (.9 + .6 + .3)/3 = .6; MLLM (80 + 40 + 60)/3 = 60
    // IFS .5; LFS (.766667 + .6)/2 = .683333; HFS .6; VFS .641667; Final .35 + .3·.641667 = .5425
    const scores = aggregateTask({ successStep: 2, totalSteps: 4, ocr: [1, 0.5, 0.8, 0.2], dino: [0.9, 0.6, 0.3, 0.1], mllm: [80, 40, 60, 0] });
    expect(scores.ifs).toBeCloseTo(0.5, 12);
    expect(scores.ocrMean).toBeCloseTo(2.3 / 3, 12);
    expect(scores.dinoMean).toBeCloseTo(0.6, 12);
    expect(scores.mllmMean).toBeCloseTo(60, 12);
    expect(scores.lfs).toBeCloseTo(0.6833333333, 9);
    expect(scores.hfs).toBeCloseTo(0.6, 12);
    expect(scores.vfs).toBeCloseTo(0.6416666667, 9);
    expect(scores.final).toBeCloseTo(0.5425, 12);
    expect(scores.countedSteps).toBe(3);
  });

  it("early failure: success_step 0 keeps only evalpoint 0", () => {
    // IFS 0; LFS (.4 + .5)/2 = .45; HFS .3; VFS .375; Final .3·.375 = .1125
    const scores = aggregateTask({ successStep: 0, totalSteps: 5, ocr: [0.4, 1], dino: [0.5, 1], mllm: [30, 100] });
    expect(scores.ifs).toBe(0);
    expect(scores.lfs).toBeCloseTo(0.45, 12);
    expect(scores.hfs).toBeCloseTo(0.3, 12);
    expect(scores.vfs).toBeCloseTo(0.375, 12);
    expect(scores.final).toBeCloseTo(0.1125, 12);
  });

  it("a full success with perfect visuals scores 1 everywhere", () => {
    const scores = aggregateTask({ successStep: 3, totalSteps: 3, ocr: [1, 1], dino: [1, 1], mllm: [100, 100] });
    expect(scores).toMatchObject({ ifs: 1, lfs: 1, hfs: 1, vfs: 1, final: 1 });
  });

  it("empty lists (the page never loaded) give means of 0, not NaN", () => {
    const scores = aggregateTask({ successStep: 0, totalSteps: 3, ocr: [], dino: [], mllm: [] });
    expect(scores).toMatchObject({ ifs: 0, lfs: 0, hfs: 0, vfs: 0, final: 0, countedSteps: 0 });
    expect(mean([])).toBe(0);
  });

  it("IFS alone when visuals are empty: success 2 of 4 → Final .7·.5 = .35", () => {
    expect(aggregateTask({ successStep: 2, totalSteps: 4, ocr: [], dino: [], mllm: [] }).final).toBeCloseTo(0.35, 12);
  });

  it("rejects out-of-range inputs with the list and index", () => {
    expect(() => aggregateTask({ successStep: 1, totalSteps: 2, ocr: [0.5, 1.2], dino: [1, 1], mllm: [1, 1] })).toThrow(
      /ocr\[1\]: expected a number in \[0, 1\], got 1.2/,
    );
    expect(() => aggregateTask({ successStep: 1, totalSteps: 2, ocr: [1], dino: [1], mllm: [101] })).toThrow(/mllm\[0\]/);
    expect(() => aggregateTask({ successStep: 3, totalSteps: 2, ocr: [], dino: [], mllm: [] })).toThrow(IwrError);
  });
});

describe("averageScores", () => {
  it("is the unweighted mean over tasks", () => {
    const a = aggregateTask({ successStep: 2, totalSteps: 4, ocr: [1, 0.5, 0.8, 0.2], dino: [0.9, 0.6, 0.3, 0.1], mllm: [80, 40, 60, 0] });
    const b = aggregateTask({ successStep: 0, totalSteps: 5, ocr: [0.4], dino: [0.5], mllm: [30] });
    const average = averageScores([a, b]);
    expect(average.final).toBeCloseTo((0.5425 + 0.1125) / 2, 12);
    expect(average.ifs).toBeCloseTo(0.25, 12);
    expect(() => averageScores([])).toThrow(/zero tasks/);
  });
});
