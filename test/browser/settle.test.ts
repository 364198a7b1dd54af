/**
 * Waiting for a page to be at rest (src/browser/settle.ts) on real pages in real
 * Chromium: a CSS transition of about half a second, a View Transition, a web font and
 * an image that arrive late, and a page that never settles (a canvas animating forever
 * beside an endless CSS spinner), which is captured at the bound.
 */

import type { BrowserContext, Page } from "playwright";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { pageSettleProbe, RequestsInFlight, readPageActivity, type SettleTimings, waitUntilAtRest } from "../../src/browser/settle.ts";
import { SETTLE_PAGES_DIR, type SlowServer, startSlowServer } from "../support/slow-server.ts";

/** Generous bound for late files (they arrive after 1.2 s), a short one for the page that never settles. */
const TIMINGS: SettleTimings = { minWaitMs: 0, quietWindowMs: 300, pollIntervalMs: 100, boundMs: 8000 };
const SHORT_BOUND = 2000;

let server: SlowServer;
let context: BrowserContext;

beforeAll(async () => {
  const photo = await sharp({ create: { width: 200, height: 120, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    .png()
    .toBuffer();
  server = await startSlowServer(SETTLE_PAGES_DIR, { "photo.png": photo });
  context = await (await sharedBrowser()).newContext({ viewport: { width: 800, height: 400 } });
});

afterAll(async () => {
  await context?.close();
  await server?.close();
  await closeSharedBrowser();
});

/** Opens `file` and returns the page with its request follower (attached before the page loads). */
async function open(file: string, waitUntil: "load" | "domcontentloaded" = "load"): Promise<{ page: Page; requests: RequestsInFlight }> {
  const page = await context.newPage();
  const requests = new RequestsInFlight(page);
  await page.goto(server.url(file), { waitUntil });
  return { page, requests };
}

describe("waitUntilAtRest", () => {
  it("waits out a CSS transition of half a second (after its delay), then keeps the page still for the quiet window", async () => {
    const { page, requests } = await open("transition.html");
    await page.click("#go");
    // What the wait sees right after the click: a transition about to run.
    expect((await readPageActivity(page)).runningAnimations).toBeGreaterThan(0);
    const settle = await waitUntilAtRest(pageSettleProbe(page, requests, 10_000), TIMINGS);
    expect(settle).toMatchObject({ atRest: true, stillGoing: [] });
    expect(await page.evaluate(() => (window as unknown as { transitionEnded?: boolean }).transitionEnded)).toBe(true);
    // 0.15 s delay + 0.5 s transition + the quiet window.
    expect(settle.waitedMs).toBeGreaterThanOrEqual(650);
    const box = await page.locator("#box").boundingBox();
    expect(box?.x).toBe(420);
    await page.close();
  });

  it("waits out a View Transition", async () => {
    const { page, requests } = await open("view-transition.html");
    await page.click("#open");
    const settle = await waitUntilAtRest(pageSettleProbe(page, requests, 10_000), TIMINGS);
    expect(settle.atRest).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { transitionDone?: boolean }).transitionDone)).toBe(true);
    expect(await page.evaluate(() => Boolean((document as Document & { activeViewTransition?: unknown }).activeViewTransition))).toBe(false);
    expect(settle.waitedMs).toBeGreaterThanOrEqual(500);
    await page.close();
  });

  it("waits for a web font that arrives late", async () => {
    // The server holds the font 1.2 s from its request, which the page makes before the wait begins:
    // the wait ends no earlier than 1.2 s after the page was opened (not 1.2 s after it began).
    const opened = Date.now();
    const { page, requests } = await open("font.html", "domcontentloaded");
    await page.waitForFunction(() => document.fonts.status === "loading");
    expect((await readPageActivity(page)).fontsLoading).toBe(true);
    const settle = await waitUntilAtRest(pageSettleProbe(page, requests, 10_000), TIMINGS);
    expect(settle.atRest).toBe(true);
    expect(await page.evaluate(() => document.fonts.check('40px "Late Sans"') && document.fonts.status)).toBe("loaded");
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1200);
    expect(settle.waitedMs).toBeGreaterThan(0);
    await page.close();
  });

  it("waits for an image in view that arrives late", async () => {
    const { page, requests } = await open("late-image.html", "domcontentloaded");
    expect((await readPageActivity(page)).imagesLoading).toBe(1);
    const settle = await waitUntilAtRest(pageSettleProbe(page, requests, 10_000), TIMINGS);
    expect(settle.atRest).toBe(true);
    expect(await page.evaluate(() => (document.getElementById("photo") as HTMLImageElement).naturalWidth)).toBe(200);
    expect(settle.waitedMs).toBeGreaterThanOrEqual(1200);
    await page.close();
  });

  it("never ends before the minimum wait, even on a still page", async () => {
    const { page, requests } = await open("transition.html");
    const settle = await waitUntilAtRest(pageSettleProbe(page, requests, 10_000), { ...TIMINGS, minWaitMs: 900 });
    expect(settle.atRest).toBe(true);
    expect(settle.waitedMs).toBeGreaterThanOrEqual(900);
    await page.close();
  });

  it("captures a page that never settles at the bound, and says what kept moving", async () => {
    const { page, requests } = await open("endless.html");
    const started = Date.now();
    const settle = await waitUntilAtRest(pageSettleProbe(page, requests, 10_000), { ...TIMINGS, boundMs: SHORT_BOUND });
    const elapsed = Date.now() - started;
    expect(settle.atRest).toBe(false);
    expect(settle.waitedMs).toBeGreaterThanOrEqual(SHORT_BOUND);
    // One more look may start just before the bound; never a whole second more.
    expect(elapsed).toBeLessThan(SHORT_BOUND + 1500);
    expect(settle.stillGoing.join("; ")).toMatch(/the screen kept changing \(no element moved/);
    expect(settle.stillGoing.join("; ")).toMatch(/1 endless animation/);
    await page.close();
  });
});
