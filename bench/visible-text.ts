/**
 * What bench:ocr takes for the truth of a checkpoint's text: the task's true page replayed
 * by the evaluator (deterministic mode, offline judge and grounding), and at each
 * screenshot that is pixel for pixel the task's checkpoint, the text the page shows in
 * the viewport, from the DOM: every text node with a box inside the viewport whose element
 * is not hidden, and the value (or placeholder) of each visible field. Checkpoints the
 * replay did not reproduce exactly have no truth.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright";
import { writeCalibrationCandidate } from "../src/calibration/calibration.ts";
import { closeEvaluator, createEvaluator } from "../src/evaluator/create-evaluator.ts";
import { evaluateTask } from "../src/evaluator/evaluate-task.ts";
import { imageContentKey } from "../src/metrics/image-readings.ts";
import { candidateFiles } from "../src/results/layout.ts";
import type { Task } from "../src/tasks/schema.ts";

/**
 * Runs in the page: the visible text of the viewport, in document order. A string, not a
 * function: tsx compiles functions with helpers (`__name`) the page does not have.
 */
const VIEWPORT_TEXT = `(() => {
  const parts = [];
  const inViewport = (rect) => rect.width > 0 && rect.height > 0 && rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth;
  const shown = (element) => {
    const style = getComputedStyle(element);
    return style.visibility !== "hidden" && Number(style.opacity) > 0 && style.display !== "none";
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = (node.textContent || "").trim();
    const parent = node.parentElement;
    if (!text || !parent || !shown(parent) || ["SCRIPT", "STYLE", "NOSCRIPT", "TEXTAREA"].includes(parent.tagName)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    if (Array.from(range.getClientRects()).some(inViewport)) parts.push(text);
  }
  for (const field of Array.from(document.querySelectorAll("input, textarea"))) {
    if (field instanceof HTMLInputElement && ["checkbox", "radio", "hidden", "range", "color", "file"].includes(field.type)) continue;
    if (!shown(field) || !inViewport(field.getBoundingClientRect())) continue;
    const text = field.value || field.placeholder;
    if (text) parts.push(text);
  }
  return parts.join(" ");
})()`;

/** Checkpoint path → the DOM's visible text when the true page showed exactly that checkpoint. */
export async function visibleTexts(tasks: readonly Task[]): Promise<Map<string, string>> {
  const resultDir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-ocr-truth-"));
  const truths = new Map<string, string>();
  const evaluator = await createEvaluator({ judge: "heuristic", grounding: "heuristic", trace: false });
  try {
    for (const task of tasks) {
      const candidateDir = writeCalibrationCandidate(task, resultDir, "reference");
      const texts = new Map<number, string>();
      const probe = async (index: number, page: Page) => {
        texts.set(index, String(await page.evaluate(VIEWPORT_TEXT)));
      };
      const evaluation = await evaluateTask({ task, candidateDir, model: "reference", pairingModes: ["aligned"], evaluator, calibration: true, probe });
      for (const step of evaluation.records[0]?.record.steps ?? []) {
        const text = texts.get(step.evalpoint);
        const evalpoint = path.resolve(candidateDir, step.evalpointPath);
        if (text === undefined || !fs.existsSync(evalpoint)) continue;
        const [shot, checkpoint] = await Promise.all([imageContentKey(fs.readFileSync(evalpoint)), imageContentKey(fs.readFileSync(step.checkpointPath))]);
        if (shot === checkpoint) truths.set(step.checkpointPath, text);
      }
      fs.rmSync(candidateFiles(candidateDir).evalpoints, { recursive: true, force: true });
    }
  } finally {
    await closeEvaluator();
    fs.rmSync(resultDir, { recursive: true, force: true });
  }
  return truths;
}
