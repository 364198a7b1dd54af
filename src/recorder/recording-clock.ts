/**
 * The clock a recording runs under (src/browser/determinism.ts, src/browser/stepped-clock.ts)
 * and why: chosen from the preflight's looks at the opened page, and changed to the stepped
 * clock when the recording under the real clock saw late timer changes (late-timers.ts).
 */
import fs from "node:fs";
import type { SettleRecord } from "../browser/settle.ts";
import { keepsMovingOnItsOwn, type PageClock } from "../browser/stepped-clock.ts";
import { errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";
import { describeLateTimerChanges } from "./late-timers.ts";
import { runRecordingSession, type SessionInput, type SessionResult } from "./session.ts";

const logger = log("recorder");

/** A recording's clock, and why it was chosen (recording.json keeps the reason). */
export interface ChosenClock {
  readonly clock: PageClock;
  readonly why: string;
}

/** Where a first recording waits while the page is recorded again (removed with the working folder on any failure). */
export function setAsideFolder(workDir: string): string {
  return `${workDir}.shifted`;
}

interface ClockedSession {
  readonly session: SessionResult;
  readonly clock: ChosenClock;
  /** For the task's warnings: late timer changes the recording keeps under the shifted clock. */
  readonly warning?: string;
}

/**
 * Runs the recording session under the chosen clock. With the clock left to the recorder,
 * a page that made late timer changes under the shifted clock (late-timers.ts: its
 * pictures depend on the pace between actions) is recorded again under the stepped clock,
 * whose plan carries that pace into the replay. If that second recording fails, the first
 * one stands, with a warning; a page kept under the shifted clock as asked gets one too.
 */
export async function recordUnderChosenClock(input: SessionInput, asked: "auto" | PageClock, chosen: ChosenClock): Promise<ClockedSession> {
  const first = await runRecordingSession({ ...input, clock: chosen.clock });
  if (chosen.clock !== "shifted" || first.lateTimerChanges.length === 0) return { session: first, clock: chosen };
  const late = describeLateTimerChanges(first.lateTimerChanges);
  if (asked !== "auto") return { session: first, clock: chosen, warning: `${late}; kept under the shifted clock as asked, so a replay may not show them` };
  logger.info(`${late}: recording it again under the stepped clock`);
  // The first recording steps aside (its result names files in its folder) until the second one has succeeded.
  const firstDir = setAsideFolder(input.outDir);
  fs.renameSync(input.outDir, firstDir);
  let again: SessionResult;
  try {
    fs.mkdirSync(input.outDir, { mode: 0o700 });
    again = await runRecordingSession({ ...input, clock: "stepped" });
  } catch (error) {
    fs.rmSync(input.outDir, { recursive: true, force: true });
    fs.renameSync(firstDir, input.outDir);
    // Logged with the task's other warnings.
    const warning = `${late}, but recording it under the stepped clock failed (${errorMessage(error)}): it keeps the shifted clock`;
    return { session: first, clock: { clock: "shifted", why: `${chosen.why}; ${warning}` }, warning };
  }
  fs.rmSync(firstDir, { recursive: true, force: true });
  return { session: again, clock: { clock: "stepped", why: `${late}; recorded again under the stepped clock, which keeps that pace on replay` } };
}

/**
 * The clock the recording runs under, and why (recording.json keeps the reason): the
 * stepped clock for a page that moved on its own under the shifted clock (`shifted`) and
 * came to rest under the stepped one (`stepped`, the preflight's second look).
 */
export function recordingClock(asked: "auto" | PageClock, shifted: SettleRecord, stepped?: SettleRecord): ChosenClock {
  if (asked !== "auto") return { clock: asked, why: `asked for (${asked})` };
  if (!keepsMovingOnItsOwn(shifted)) {
    return { clock: "shifted", why: shifted.atRest ? "the opened page came to rest" : "the opened page was still loading at the bound" };
  }
  const moving = `the opened page never came to rest within ${shifted.waitedMs} ms (${shifted.stillGoing.join("; ")}) with nothing left loading`;
  if (!stepped) return { clock: "shifted", why: `${moving}; the stepped clock could not be tried` };
  if (stepped.atRest) return { clock: "stepped", why: `${moving}; under the stepped clock it came to rest` };
  const still = `(${stepped.stillGoing.join("; ")})`;
  if (!keepsMovingOnItsOwn(stepped)) return { clock: "shifted", why: `${moving}; under the stepped clock it was still loading at the bound ${still}` };
  return { clock: "shifted", why: `${moving}, and the stepped clock did not bring it to rest either ${still}: what moves keeps real time` };
}
