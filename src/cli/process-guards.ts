/**
 * One process-wide guard the command line installs, for a known race inside Playwright:
 * an event about a page object (a response, a request) can arrive just after that
 * object's context was closed, when a hostile page is torn down mid-load, and
 * Playwright's client then throws "Object with guid … was not bound in the connection"
 * from its message loop, an uncaught exception that would end the whole run for one
 * page's sake. That one error drops the stale event and is logged; every other uncaught
 * exception still ends the process as Node would (printed, exit code 3).
 */
import { errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";
import { EXIT_CODES } from "./exit-codes.ts";

const PLAYWRIGHT_STALE_EVENT = /^Object with guid \S+ was not bound in the connection$/;
let installed = false;

/**
 * After the first Ctrl-C or SIGTERM, how long work in flight (a model call, a page being
 * replayed) may take to finish before it is cancelled; its checkpoint is kept and the
 * cell or task is left unfinished, for a rerun to resume.
 */
export const STOP_GRACE_MS = 5_000;

/**
 * Queue mode's last resort once its command is done (`iwr run --queue`, `iwr worker`): after
 * Redis went away, BullMQ can leave timers behind (a job's lock renewal, retried for ever;
 * the watchdog of a blocking wait for jobs) that keep the process alive. The timer set here
 * does not hold the process itself: it fires only if something else still does, and ends it
 * with its exit code. Only in the real command (tests call main() in their own process).
 */
export function exitIfStillRunningAfter(ms: number): void {
  if (installed) setTimeout(() => process.exit(), ms).unref();
}

export function installProcessGuards(): void {
  if (installed) return;
  installed = true;
  process.on("uncaughtException", (error) => {
    if (error instanceof Error && PLAYWRIGHT_STALE_EVENT.test(error.message)) {
      log("browser").warn(`ignored an event for a page that was already closed (${error.message})`);
      return;
    }
    process.stderr.write(`${error instanceof Error && error.stack ? error.stack : errorMessage(error)}\n`);
    process.exit(EXIT_CODES.broken);
  });
}
