/**
 * The official dataset's file layout (docs/protocol.md §1), in one place, so the
 * loader, the validator and any task writer agree on every name:
 *
 *   <dir>/<name>.jsonl
 *   <dir>/<name>/<id>/video.mp4
 *   <dir>/<name>/<id>/stitched_assets/stitched_image*.png
 *   <dir>/<name>/<id>/assets/<file>
 *   <dir>/<name>/<id>/checkpoints/step_<k>.png
 *
 * and ours beside them (the harness never looks for them): `reference/`, `recording.json`,
 * and `states/action_<i>.png`, the page at rest after every action i = 1..n (truth, like
 * the checkpoints; a flagged action's state is the same image as its checkpoint).
 */
import path from "node:path";

export const TASK_FILES = Object.freeze({
  video: "video.mp4",
  sheetsDir: "stitched_assets",
  assetsDir: "assets",
  checkpointsDir: "checkpoints",
  /** Ours: the recorder's reference page and the site's files beside it (absent in the benchmark's own tasks). */
  referenceDir: "reference",
  /** Ours: what the recorder captured and decided (src/recorder/recording-notes.ts). */
  recordingNotes: "recording.json",
  /** Ours: the reference state after every action, `action_<i>.png` (absent in the benchmark's own tasks and older recordings). */
  statesDir: "states",
});

const SHEET_FILE = /^stitched_image.*\.png$/i;
const CHECKPOINT_FILE = /^step_(\d+)\.png$/;
const ACTION_STATE_FILE = /^action_(\d+)\.png$/;

/** `<dir>/<name>/` for `<dir>/<name>.jsonl`. */
export function taskSetDir(jsonlPath: string): string {
  return path.join(path.dirname(jsonlPath), path.basename(jsonlPath, path.extname(jsonlPath)));
}

export function taskDir(jsonlPath: string, id: number): string {
  return path.join(taskSetDir(jsonlPath), String(id));
}

export function checkpointFileName(step: number): string {
  return `step_${step}.png`;
}

export function isSheetFileName(name: string): boolean {
  return SHEET_FILE.test(name);
}

/** The state after action `action` (1-based), in `states/`. */
export function actionStateFileName(action: number): string {
  return `action_${action}.png`;
}

/** The action number of `action_<i>.png`, or undefined for any other name. */
export function actionStateNumber(name: string): number | undefined {
  const match = ACTION_STATE_FILE.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** The step number of `step_<k>.png`, or undefined for any other name. */
export function checkpointStep(name: string): number | undefined {
  const match = CHECKPOINT_FILE.exec(name);
  return match ? Number(match[1]) : undefined;
}

/**
 * Sheets in numeric order: `stitched_image.png` (no number) first, then by the number
 * in the name, so `stitched_image_10.png` comes after `stitched_image_2.png`.
 */
export function sortSheetNames(names: readonly string[]): string[] {
  const numberIn = (name: string): number => {
    const digits = /\d+/.exec(name.slice("stitched_image".length));
    return digits ? Number(digits[0]) : -1;
  };
  return [...names].sort((a, b) => numberIn(a) - numberIn(b) || a.localeCompare(b));
}
