import { afterAll, it } from "vitest";
import { openSandboxedPage } from "../src/browser/host.ts";
import { closeSharedBrowser, sharedBrowser } from "../src/browser/launch.ts";
import { deadEndProxy } from "../src/browser/sandbox-guards.ts";
import { startStaticServer } from "../src/browser/static-server.ts";
import { HOSTILE_PAGES_DIR, NORMAL_SITE_DIR } from "../test/support/browser-fixtures.ts";
afterAll(() => closeSharedBrowser());
for (const burst of (process.env.BURSTS ?? "200,10,4").split(",").map(Number)) {
  it(`burst ${burst}`, async () => {
    const hostile = await startStaticServer(HOSTILE_PAGES_DIR);
    const normal = await startStaticServer(NORMAL_SITE_DIR);
    const browser = await sharedBrowser();
    const ctx = await browser.newContext({ proxy: deadEndProxy(hostile.origin) });
    let seen = 0;
    ctx.on("request", () => { seen += 1; });
    const t0 = Date.now();
    const cpu0 = process.cpuUsage();
    const p = await ctx.newPage();
    await p.goto(hostile.url(`request-flood.html?burst=${burst}`));
    const loads: number[] = [];
    while (seen <= 10_000 && Date.now() - t0 < 120_000) {
      const s = Date.now();
      const page = await openSandboxedPage({ server: normal, entry: "index.html", resolution: { width: 800, height: 600 } });
      await page.page.textContent("#counter-button");
      loads.push(Date.now() - s);
      await page.close();
    }
    const cpu = process.cpuUsage(cpu0);
    console.log(`burst ${burst}: cap after ${Date.now() - t0} ms, seen ${seen}, node cpu ${(cpu.user + cpu.system) / 1e6}s, page open+read ms: ${loads.join(",")}`);
    await ctx.close();
    await Promise.all([hostile.close(), normal.close()]);
  }, 200_000);
}
