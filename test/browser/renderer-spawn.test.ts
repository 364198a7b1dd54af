/**
 * A new page's renderer found as the one renderer process that appeared while the page was
 * created, checked against the browser's own answer (a trace, renderer-memory.ts) on real
 * Chromium: for pages created at once, when a stranger's renderer appears at the same
 * moment (then the trace decides), and after a creation that failed.
 */
import type { Browser, BrowserContext } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { lookUpRenderer, rendererResidentMiB } from "../../src/browser/renderer-memory.ts";
import { newPageWithRenderer, rendererPidsBelow } from "../../src/browser/renderer-spawn.ts";

let browser: Browser;
const contexts: BrowserContext[] = [];

async function freshContext(): Promise<BrowserContext> {
  const context = await browser.newContext();
  contexts.push(context);
  return context;
}

beforeAll(async () => {
  browser = await sharedBrowser();
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await closeSharedBrowser();
});

describe("a new page's renderer", () => {
  it("is the one that appeared with it, for pages created at once, and the one a trace names", async () => {
    const opened = await Promise.all([1, 2, 3, 4].map(async () => newPageWithRenderer(await freshContext(), { lookupMs: 15_000 })));
    const pids = opened.map((each) => each.renderers.pids);
    for (const [k, each] of opened.entries()) {
      expect(each.foundBy).toBe("spawn");
      expect(pids[k]).toHaveLength(1);
      expect(rendererResidentMiB(pids[k]![0]!)).toBeGreaterThan(0);
      expect((await lookUpRenderer(each.page, 15_000)).pids).toEqual(pids[k]);
    }
    expect(new Set(pids.flat()).size).toBe(4);
    for (const pid of pids.flat()) expect(rendererPidsBelow().has(pid)).toBe(true);
  });

  it("is left to a trace when another renderer appears at the same moment", async () => {
    // A stranger's renderer (a made-up pid) shows up in the second listing beside the page's.
    let listings = 0;
    const listRenderers = () => {
      const now = rendererPidsBelow();
      listings += 1;
      return listings === 2 ? new Set([...now, 2 ** 22 + 7]) : now;
    };
    const opened = await newPageWithRenderer(await freshContext(), { lookupMs: 15_000, listRenderers });
    expect(opened.foundBy).toBe("trace");
    expect(opened.renderers.pids).toHaveLength(1);
    expect(opened.renderers.pids).not.toContain(2 ** 22 + 7);
    expect((await lookUpRenderer(opened.page, 15_000)).pids).toEqual(opened.renderers.pids);
  });

  it("is left to a trace when no renderer appears (the page's was already running)", async () => {
    let listings = 0;
    let first = new Set<number>();
    const listRenderers = () => {
      listings += 1;
      // The second listing is made to show nothing new, as when the page reused a process.
      if (listings === 1) first = rendererPidsBelow();
      return listings === 2 ? first : rendererPidsBelow();
    };
    const opened = await newPageWithRenderer(await freshContext(), { lookupMs: 15_000, listRenderers });
    expect(opened.foundBy).toBe("trace");
    expect(opened.renderers.pids).toHaveLength(1);
  });

  it("is left to a trace when the renderers cannot be listed", async () => {
    const listRenderers = () => {
      throw Object.assign(new Error("EMFILE: too many open files, open '/proc/1/stat'"), { code: "EMFILE" });
    };
    const opened = await newPageWithRenderer(await freshContext(), { lookupMs: 15_000, listRenderers });
    expect(opened.foundBy).toBe("trace");
    expect(opened.renderers.pids).toHaveLength(1);
  });

  it("lets the next page be created at once after a creation that failed", async () => {
    const closed = await browser.newContext();
    await closed.close();
    await expect(newPageWithRenderer(closed, { lookupMs: 1_000 })).rejects.toThrow();
    const started = Date.now();
    const opened = await newPageWithRenderer(await freshContext(), { lookupMs: 15_000 });
    expect(opened.foundBy).toBe("spawn");
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
