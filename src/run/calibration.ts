/**
 * Calibration candidates: for a task, the true page post-processed exactly like a
 * model's answer (`reference`, the ceiling) and an empty page (`blank`, the floor).
 * Evaluating both with the offline judge and grounding shows whether the evaluator
 * can give a perfect page full marks and an empty one nothing; `npm run calibrate`
 * and `npm run bench:evaluator` build on this.
 */
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";
import type { Task } from "../tasks/schema.ts";
import { assetsBasePath, extractPageFromReply } from "../../agents/single-pass/html-reply.ts";

export const CALIBRATION_CANDIDATES = ["reference", "blank"] as const;
export type CalibrationCandidate = (typeof CALIBRATION_CANDIDATES)[number];

/** The recorder's reference page, `<task>/reference/index.html` (placeholder links in it). */
export function referencePagePath(task: Task): string {
  return path.join(task.dir, "reference", "index.html");
}

export const BLANK_PAGE = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>blank</title></head><body></body></html>\n";

/** Writes `<resultDir>/<id>/<candidate>/index.html` and returns that folder. */
export function writeCalibrationCandidate(task: Task, resultDir: string, candidate: CalibrationCandidate): string {
  const candidateDir = path.join(resultDir, String(task.id), candidate);
  fs.mkdirSync(candidateDir, { recursive: true });
  let html = BLANK_PAGE;
  if (candidate === "reference") {
    const source = referencePagePath(task);
    if (!fs.existsSync(source)) {
      throw new IwrError("TASK_INVALID", `task ${task.id}: no reference page at ${source} (record the suite with npm run tasks:build)`);
    }
    // The same post-processing a model's reply gets: iframes out, placeholder → relative assets path.
    html = extractPageFromReply(fs.readFileSync(source, "utf8"), assetsBasePath(candidateDir, task.inputs.assetsDir));
  }
  fs.writeFileSync(path.join(candidateDir, "index.html"), html);
  return candidateDir;
}
