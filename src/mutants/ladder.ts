/**
 * The mutant ladder of a task and how a mutant is written into a results folder:
 * `<result>/<id>/mutant-<operator>[-<parameter>]/index.html` with `mutant.json` beside
 * it (operator, parameter, the source page's hash), so the evaluator and the self-check
 * score a mutant like any model's page.
 *
 * The ladder: freeze-after:k for k = 0 and about a third and two thirds of the task's
 * actions (so scores can be checked to rise with k), then one of each other operator
 * (text at a share of 0.3).
 */
import fs from "node:fs";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";
import { candidateDirNamed, candidateFiles } from "../results/layout.ts";
import { type MutantSpec, mutantFolderName, mutantLabel, mutatePage } from "./operators.ts";

export const MUTANT_RECORD_VERSION = 1;

export interface MutantRecord {
  version: number;
  operator: MutantSpec["operator"];
  parameter?: number;
  label: string;
  source: { description: string; sha256: string };
  createdAt: string;
}

export function mutantLadder(actions: number): MutantSpec[] {
  const freezes = [...new Set([0, Math.ceil(actions / 3), Math.ceil((2 * actions) / 3)])].filter((k) => k < Math.max(1, actions));
  return [
    ...freezes.map((k): MutantSpec => ({ operator: "freeze-after", parameter: k })),
    { operator: "no-script" },
    { operator: "lively-wrong" },
    { operator: "wrong-state" },
    { operator: "text", parameter: 0.3 },
    { operator: "no-images" },
    { operator: "layout-shift" },
    { operator: "restyle" },
  ];
}

/** `<result>/<id>/mutant-…/`: where a task's mutant goes. */
export function mutantDir(resultDir: string, taskId: number, spec: MutantSpec): string {
  return candidateDirNamed(resultDir, taskId, mutantFolderName(spec), "mutant");
}

/** Writes the mutant of `sourceHtml` (a page already post-processed for `dir`) into `dir`. */
export function writeMutant(dir: string, sourceHtml: string, spec: MutantSpec, sourceDescription: string): string {
  const files = candidateFiles(dir);
  fs.mkdirSync(dir, { recursive: true });
  const record: MutantRecord = {
    version: MUTANT_RECORD_VERSION,
    operator: spec.operator,
    ...(spec.parameter !== undefined ? { parameter: spec.parameter } : {}),
    label: mutantLabel(spec),
    source: { description: sourceDescription, sha256: sha256Hex(sourceHtml) },
    createdAt: new Date().toISOString(),
  };
  writeFileAtomicSync(files.mutant, `${JSON.stringify(record, null, 2)}\n`);
  writeFileAtomicSync(files.page, mutatePage(sourceHtml, spec));
  return dir;
}
