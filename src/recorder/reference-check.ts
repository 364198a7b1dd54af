/**
 * The last check before a recorded task is installed: its reference page, served the
 * way the evaluator serves a candidate (its folder at "/", the task's assets where the
 * placeholder points), loads without a single missing file. A reference that would
 * miss a file the site loaded scores below what the site deserves and silently lowers
 * the calibration ceiling, so a miss is an error naming each URL.
 */
import fs from "node:fs";
import path from "node:path";
import type { Determinism } from "../browser/determinism.ts";
import { startStaticServer } from "../browser/static-server.ts";
import { SteppedClock } from "../browser/stepped-clock.ts";
import { IwrError } from "../errors.ts";
import { assetsBasePath, extractPageFromReply } from "../generation/page-from-reply.ts";
import { PROTOCOL } from "../protocol.ts";
import { candidateMounts } from "../replay/candidate-serving.ts";
import type { Resolution } from "../tasks/inputs.ts";
import { type BlockedRequests, newRecordingContext, openEntry } from "./session.ts";
import { SiteCapture } from "./site-capture.ts";

/**
 * Serves a copy of `referenceDir` as a candidate beside `assetsDir` and throws when any
 * same-origin request fails while it opens and settles — except the paths in
 * `failedOnSite`, which failed on the site itself (warned about already): the reference
 * cannot be blamed for them. A request the reference makes to any other origin (an
 * absolute URL to the site's own server, say) is refused and is a miss too, unless the
 * recording refused it as well (`blockedOnSite`, by blockedRequestKey).
 */
export async function requireReferenceLoads(
  workDir: string,
  referenceDir: string,
  assetsDir: string,
  resolution: Resolution,
  determinism: Determinism,
  failedOnSite: ReadonlySet<string>,
  blockedOnSite: ReadonlySet<string>,
): Promise<void> {
  // The assets go under a name no site uses, so their mount cannot shadow a folder of the site's own (e.g. assets/).
  const checkDir = path.join(workDir, ".reference-check");
  const candidateDir = path.join(checkDir, "candidate");
  const checkAssetsDir = path.join(checkDir, "__iwr_task_assets__");
  fs.cpSync(referenceDir, candidateDir, { recursive: true });
  fs.cpSync(assetsDir, checkAssetsDir, { recursive: true });
  const entry = path.join(candidateDir, "index.html");
  fs.writeFileSync(entry, extractPageFromReply(fs.readFileSync(entry, "utf8"), assetsBasePath(candidateDir, checkAssetsDir)));
  const server = await startStaticServer({ mounts: candidateMounts(candidateDir, checkAssetsDir) });
  const warnings: string[] = [];
  const blocked: BlockedRequests = { urls: new Set() };
  const plan = determinism.steppedClock;
  const context = await newRecordingContext(resolution, determinism, warnings, server.origin, blocked, plan ? "stepped" : "shifted");
  try {
    const page = await context.newPage();
    const capture = new SiteCapture(server.origin);
    capture.attach(page);
    await openEntry(page, server.url("index.html"));
    // Under the stepped clock the page's scripts run only as its clock advances: as far as the recording's did.
    if (plan) await new SteppedClock(page).advance(plan.openMs);
    else await page.waitForTimeout(PROTOCOL.initialSettleMs);
    const missing = capture.failedFiles().filter((file) => !failedOnSite.has(file.path));
    const refused = [...blocked.urls].filter((url) => !blockedOnSite.has(url));
    if (missing.length + refused.length > 0) {
      const shown = [...missing.map((file) => `${file.path} (${file.why})`), ...refused.map((key) => `${key} (another origin than the reference's own)`)];
      throw new IwrError("RECORDER", `the reference page would miss ${shown.length} file(s) the site served, when served as a candidate: ${shown.join("; ")}`, {
        failures: shown,
      });
    }
  } finally {
    await context.close().catch(() => undefined);
    await server.close();
    fs.rmSync(checkDir, { recursive: true, force: true });
  }
}
