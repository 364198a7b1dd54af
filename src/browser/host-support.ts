/** Small pieces of the page host that need Playwright but not the host's state. */
import fs from "node:fs";
import path from "node:path";
import type { BrowserContext, Page } from "playwright";
import { errorMessage } from "../errors.ts";
import { tempPathBeside } from "../files/atomic.ts";
import { log } from "../log/logger.ts";
import { settleWithin } from "./deadline.ts";
import type { TargetIds } from "./teardown.ts";

const logger = log("browser");

/**
 * Reads the page's CDP target and browser-context ids while the page is still fresh
 * and responsive, so a later teardown can close it from the browser side.
 */
export async function readTargetIds(context: BrowserContext, page: Page): Promise<TargetIds[]> {
  try {
    const session = await context.newCDPSession(page);
    const { targetInfo } = await session.send("Target.getTargetInfo");
    await session.detach().catch(() => undefined);
    return [{ targetId: targetInfo.targetId, browserContextId: targetInfo.browserContextId }];
  } catch (error) {
    logger.debug(`could not read the page's CDP target id (${errorMessage(error)}); teardown falls back to dropping the browser`);
    return [];
  }
}

/** Stops tracing into `tracePath`, atomically (temp file in the same folder, then rename). */
export async function saveTrace(context: BrowserContext, tracePath: string, ms: number): Promise<boolean> {
  const folder = path.dirname(path.resolve(tracePath));
  await fs.promises.mkdir(folder, { recursive: true });
  const temp = tempPathBeside(path.resolve(tracePath));
  const stopping = context.tracing.stop({ path: temp });
  const settled = await settleWithin(stopping, ms);
  if (settled.status === "done") {
    await fs.promises.rename(temp, tracePath);
    return true;
  }
  // A late finish must not leave a half-written temp file behind.
  void stopping.catch(() => undefined).finally(() => fs.promises.rm(temp, { force: true }).catch(() => undefined));
  logger.warn(`trace not saved to ${tracePath}: ${settled.status === "failed" ? errorMessage(settled.error) : `took over ${ms} ms`}`);
  return false;
}
