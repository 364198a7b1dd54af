/**
 * Our page scripts run through the page's DevTools session: they answer as page.evaluate
 * would (values, promises, the page's exceptions, a page between two documents), and they
 * leave nothing in the page's Playwright trace, where the at-rest wait's readings used to
 * bury the replay's own actions. A page.evaluate made beside them shows the trace records
 * evaluations at all.
 */
import fs from "node:fs";
import path from "node:path";
import { unzipSync } from "fflate";
import type { Page } from "playwright";
import { afterAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { evaluateInPage } from "../../src/browser/page-scripts.ts";
import { readPageActivity } from "../../src/browser/settle.ts";
import { stillnessScreen } from "../../src/browser/stillness-look.ts";
import { makeTempDir } from "../support/browser-fixtures.ts";

const RESOLUTION = { width: 640, height: 480 };

afterAll(async () => {
  await closeSharedBrowser();
});

function pageDir(): string {
  const dir = makeTempDir("untraced-scripts");
  fs.writeFileSync(path.join(dir, "index.html"), "<!doctype html><title>one</title><h1>First</h1><a href='two.html'>next</a>");
  fs.writeFileSync(path.join(dir, "two.html"), "<!doctype html><title>two</title><h1>Second</h1>");
  return dir;
}

/** The API calls a trace zip records, by method name. */
function tracedCalls(tracePath: string): string[] {
  const files = unzipSync(new Uint8Array(fs.readFileSync(tracePath)));
  const events = new TextDecoder()
    .decode(files["trace.trace"])
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type?: string; method?: string });
  return events.filter((event) => event.type === "before").map((event) => event.method ?? "");
}

/** Runs `use` on a sandboxed page of pageDir(), and closes the page whatever happens. */
async function onPage(use: (page: Page) => Promise<void>): Promise<void> {
  const sandbox = await openSandboxedPage({ root: pageDir(), entry: "index.html", resolution: RESOLUTION });
  try {
    await use(sandbox.page);
  } finally {
    await sandbox.close();
  }
}

describe("page scripts through the page's DevTools session", () => {
  it("answer with the script's value, a promise's value, NaN, and the page's own exception", async () => {
    await onPage(async (page) => {
      expect(await evaluateInPage(page, (tag: string) => ({ heading: document.querySelector(tag)?.textContent, count: 2 }), "h1")).toEqual({
        heading: "First",
        count: 2,
      });
      expect(await evaluateInPage(page, (ms: number) => new Promise((resolve) => setTimeout(() => resolve(`after ${ms}`), ms)), 20)).toBe("after 20");
      expect(await evaluateInPage(page, () => Number.NaN, null)).toBeNaN();
      await expect(
        evaluateInPage(
          page,
          () => {
            throw new TypeError("the page's own failure");
          },
          null,
        ),
      ).rejects.toThrow(/^a page script failed in the page: TypeError: the page's own failure/);
      // As with page.evaluate, the page takes our script for a user's gesture (pages behave as they always did under it).
      expect(await evaluateInPage(page, () => navigator.userActivation.isActive, null)).toBe(true);
    });
  });

  // page.evaluate fails here with "Execution context was destroyed" (tried when this was written).
  it("answer while the page moves to another document, from one document or the next (its title not parsed yet: '')", async () => {
    await onPage(async (page) => {
      const moving = page.goto(page.url().replace("index.html", "two.html"));
      const titles = await Promise.all([1, 2, 3, 4, 5].map(() => evaluateInPage(page, () => document.title, null)));
      await moving;
      for (const title of titles) expect(["one", "two", ""]).toContain(title);
      expect(await evaluateInPage(page, () => document.title, null)).toBe("two");
    });
  });

  it("end with the page when its renderer crashes while one runs", async () => {
    await onPage(async (page) => {
      const waiting = evaluateInPage(page, () => new Promise(() => {}), null);
      const crasher = await page.context().newCDPSession(page);
      void crasher.send("Page.crash").catch(() => undefined);
      const started = Date.now();
      await expect(waiting).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  });

  it("leave no entry in the page's trace, while page.evaluate does", async () => {
    const tracePath = path.join(makeTempDir("untraced-scripts-trace"), "trace.zip");
    const sandbox = await openSandboxedPage({ root: pageDir(), entry: "index.html", resolution: RESOLUTION, tracePath });
    const { page } = sandbox;
    await evaluateInPage(page, () => document.title, null);
    await readPageActivity(page);
    await stillnessScreen(page, 5_000);
    await page.evaluate(() => document.title);
    await sandbox.close();
    const calls = tracedCalls(tracePath);
    expect(calls.filter((method) => method === "evaluateExpression")).toHaveLength(1);
  });
});
