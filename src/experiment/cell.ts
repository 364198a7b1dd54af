/**
 * One experiment cell (a task under an arm, one repeat) and the name of its candidate
 * folder: what planning and resuming need, apart from how an arm makes its page
 * (arms.ts), so that checking a finished run loads no generator.
 */
import path from "node:path";
import { mutantDir } from "../mutants/ladder.ts";
import type { CellFolder } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";
import { type Arm, armFeedback } from "./config.ts";

export interface Cell {
  arm: Arm;
  repeat: number;
  task: Task;
  /** The arm's results folder for this repeat (`<run>/arms/<arm>/repeat-<k>/`). */
  resultDir: string;
  /** The cell's candidate folder. */
  dir: string;
}

/** The candidate folder name of an arm's cells; model arms are named after the loaded spec, as the generators write them. */
export function cellFolderOf(arm: Arm, modelName?: string): CellFolder {
  switch (arm.parsed.type) {
    case "single-pass":
      return { kind: "model", model: modelName ?? arm.model ?? "" };
    case "agent":
      return { kind: "agent", model: modelName ?? arm.model ?? "", feedback: armFeedback(arm) };
    case "reference":
    case "blank":
      return { kind: "named", folder: arm.parsed.type };
    case "mutant":
      return { kind: "named", folder: path.basename(mutantDir("/", 0, arm.parsed.spec)) };
    case "module":
      return { kind: "named", folder: "module" };
    case "results":
      return { kind: "named", folder: "page" };
  }
}
