/**
 * The task's notes, `<task>/recording.json`: what the recorder had to capture for this
 * site and what it decided — the site's files kept beside the reference page, the
 * images shown (the assets) and those never shown (left out of the sheet), sheet tiles
 * converted for the decoder, the seed and clock start, how long each reference picture
 * waited for the page to be at rest (and what still moved when a wait hit its bound),
 * where each key press's focus was and whether the key reached the page, and every warning. Nothing reads
 * it to score; it is for the person checking a task, and `iwr tasks validate` leaves
 * it alone.
 */
import fs from "node:fs";
import path from "node:path";
import type { Determinism } from "../browser/determinism.ts";
import type { SettleRecord } from "../browser/settle.ts";
import { AT_REST, PROTOCOL } from "../protocol.ts";
import { TASK_FILES } from "../tasks/layout.ts";
import type { SessionResult } from "./session.ts";

export interface RecordingNotesInput {
  /** The site: its URL, or its folder relative to the task's folder (so a committed task names no machine's paths). */
  readonly site: string;
  /** The URL it was recorded from (a folder is served on a port of the moment). */
  readonly entryUrl: string;
  readonly source: string;
  readonly determinism: Determinism;
  /** Why the recording ran under the clock it did (record-task.ts, recordingClock). */
  readonly clockWhy: string;
  readonly session: SessionResult;
  /** Media the reference page's source names that the page never loaded (icons a headless browser skips, unreached states). */
  readonly namedNotLoaded: readonly string[];
  readonly warnings: readonly string[];
  readonly preflightMs: number;
}

/** A same-origin URL as its path on the site, so the notes carry no port of the moment; never a query string (it may carry a token). */
function onSite(url: string, entryUrl: string): string {
  const parsed = new URL(url);
  return parsed.origin === new URL(entryUrl).origin ? parsed.pathname.slice(1) : `${parsed.origin}${parsed.pathname}`;
}

/** The at-rest waits: the rule, each picture's wait, and a summary (the longest, the mean, how many reached the bound). */
function settleNotes(session: SessionResult) {
  const { initial, afterActions } = session.settles;
  const all: SettleRecord[] = [initial, ...afterActions];
  const waits = all.map((settle) => settle.waitedMs);
  return {
    rule: { ...AT_REST, initialMinimumMs: PROTOCOL.initialSettleMs, actionMinimumMs: PROTOCOL.actionSettleMs },
    initial,
    afterActions: afterActions.map((settle, index) => ({ action: index + 1, ...settle })),
    summary: {
      pictures: all.length,
      atBound: all.filter((settle) => !settle.atRest).length,
      longestMs: Math.max(...waits),
      meanMs: Math.round(waits.reduce((sum, wait) => sum + wait, 0) / waits.length),
    },
  };
}

export function writeRecordingNotes(taskDir: string, input: RecordingNotesInput): void {
  const { session } = input;
  const byKind: Record<string, number> = {};
  for (const file of session.captured) byKind[file.kind] = (byKind[file.kind] ?? 0) + 1;
  const notes = {
    version: 1,
    recordedAt: new Date().toISOString(),
    site: input.site,
    sourceWebsite: input.source,
    determinism: {
      randomSeed: input.determinism.randomSeed,
      clockStart: new Date(input.determinism.clockStartMs).toISOString(),
      clock: input.determinism.steppedClock ? "stepped" : "shifted",
      clockWhy: input.clockWhy,
      ...(input.determinism.steppedClock ? { steppedClock: input.determinism.steppedClock } : {}),
    },
    video: { seconds: session.videoSec, frames: session.frameCount, checkpoints: session.checkpointCount },
    assets: session.assets.map(({ name, urls, bytes }) => ({ name, paths: urls.map((url) => onSite(url, input.entryUrl)), bytes })),
    notShown: session.notShown.map((url) => onSite(url, input.entryUrl)),
    namedNotLoaded: input.namedNotLoaded,
    /** The site's own files that failed while recording (also warnings): the reference cannot hold them either. */
    failedOnSite: session.failedOnSite,
    sheet: { converted: session.sheet.converted, unreadable: session.sheet.unreadable },
    reference: {
      entry: "index.html",
      files: session.captured.map(({ path: file, kind, bytes }) => ({ path: file, kind, bytes })),
      filesByKind: byKind,
      bytes: session.captured.reduce((sum, file) => sum + file.bytes, 0),
    },
    preflightMs: input.preflightMs,
    settle: settleNotes(session),
    keyPresses: session.presses.flatMap((press, index) => (press ? [{ action: index + 1, ...press }] : [])),
    warnings: input.warnings,
  };
  fs.writeFileSync(path.join(taskDir, TASK_FILES.recordingNotes), `${JSON.stringify(notes, null, 2)}\n`);
}
