/**
 * Developer aid, not a test: replays one or all bundled scripts and writes a
 * screenshot per step to a folder, printing locator counts and missing literals.
 *   npx tsx test/support/sites-preview.ts <out-dir> [script-name...]
 */
import path from "node:path";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { startStaticServer } from "../../src/browser/static-server.ts";
import { PROTOCOL } from "../../src/protocol.ts";
import { replayScript } from "./sites-replay.ts";
import { loadSuiteScripts } from "./sites-scripts.ts";

const [outDir = "sites-preview", ...only] = process.argv.slice(2);
const browser = await sharedBrowser();
for (const { name, siteDir, script } of loadSuiteScripts()) {
  if (only.length > 0 && !only.includes(name)) continue;
  const server = await startStaticServer(siteDir);
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  page.on("pageerror", (error) => console.log(`  page error: ${error.message}`));
  await page.goto(server.url("index.html"));
  await page.waitForTimeout(PROTOCOL.initialSettleMs);
  const reports = await replayScript(page, script.actions, { shotsDir: path.join(outDir, name) });
  console.log(name);
  for (const report of reports) {
    console.log(
      `  ${report.index + 1} ${report.action.type} matches=${report.locatorMatches ?? "-"} scroll ${report.scrollYBefore}->${report.scrollYAfter} ` +
        `missing=${JSON.stringify(report.missingLiterals)}`,
    );
  }
  await context.close();
  await server.close();
}
await closeSharedBrowser();
