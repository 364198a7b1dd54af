/** The escalation steps behind closing a hung page, each driven on its own. */

import type { BrowserContext, Page } from "playwright";
import { afterAll, describe, expect, it } from "vitest";
import { readTargetIds } from "../../src/browser/host-support.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { closeTargetsThroughCdp, forceCloseContext } from "../../src/browser/teardown.ts";

/** A context whose only page is stuck in an endless loop, with its CDP ids read beforehand. */
async function hungPage(): Promise<{ context: BrowserContext; page: Page; targets: Awaited<ReturnType<typeof readTargetIds>> }> {
  const browser = await sharedBrowser();
  const context = await browser.newContext();
  const page = await context.newPage();
  const targets = await readTargetIds(context, page);
  await page.setContent("<h1>about to hang</h1>");
  void page.evaluate("while (true) {}").catch(() => undefined);
  // Proof that the renderer no longer answers.
  const probe = await Promise.race([page.evaluate("1").then(() => "answered"), new Promise((resolve) => setTimeout(() => resolve("silent"), 500))]);
  expect(probe).toBe("silent");
  return { context, page, targets };
}

afterAll(async () => {
  await closeSharedBrowser();
});

describe("teardown of a hung page", () => {
  it("closing the context finishes even though the renderer is stuck", async () => {
    const { context, page } = await hungPage();
    const started = Date.now();
    // "context-closed" means the first step finished within its 3 s; the bound only catches a real hang.
    expect(await forceCloseContext(await sharedBrowser(), context, [], { stepMs: 3_000, browserProbeMs: 3_000 })).toBe("context-closed");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(page.isClosed()).toBe(true);
  });

  it("closing its targets through a browser-level CDP session works on a stuck renderer", async () => {
    const { context, page, targets } = await hungPage();
    expect(targets).toHaveLength(1);
    expect(targets[0]?.browserContextId).toEqual(expect.any(String));
    const browser = await sharedBrowser();
    expect(await closeTargetsThroughCdp(browser, targets, 3_000)).toBe(true);
    await expect.poll(() => page.isClosed(), { timeout: 3_000 }).toBe(true);
    await context.close().catch(() => undefined);
    expect(await closeTargetsThroughCdp(browser, [], 3_000)).toBe(false);
  });

  it("a browser that answers within the probe's bound is kept, though every step was too short: the context is abandoned", async () => {
    const { context } = await hungPage();
    const browser = await sharedBrowser();
    // Steps of 1 ms cannot close anything; the browser's probe has its own, longer bound, and the browser answers.
    expect(await forceCloseContext(browser, context, [], { stepMs: 1, browserProbeMs: 5_000 })).toBe("abandoned");
    expect(browser.isConnected()).toBe(true);
    expect(await sharedBrowser()).toBe(browser);
  });

  it("as the last resort drops the shared browser, and the next caller gets a fresh one", async () => {
    const { context } = await hungPage();
    const before = await sharedBrowser();
    // One millisecond is too short for any step to answer, so every escalation step runs.
    expect(await forceCloseContext(before, context, [], { stepMs: 1, browserProbeMs: 1 })).toBe("browser-dropped");
    await expect.poll(() => before.isConnected(), { timeout: 5_000 }).toBe(false);
    const after = await sharedBrowser();
    expect(after).not.toBe(before);
    expect(after.isConnected()).toBe(true);
    const page = await (await after.newContext()).newPage();
    await page.setContent("<p>fresh</p>");
    expect(await page.textContent("p")).toBe("fresh");
  });

  it("a browser that died is replaced once, even when several callers ask at the same moment", async () => {
    const dead = await sharedBrowser();
    await dead.close();
    const [first, second, third] = await Promise.all([sharedBrowser(), sharedBrowser(), sharedBrowser()]);
    expect(first).not.toBe(dead);
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(first?.isConnected()).toBe(true);
  });
});
