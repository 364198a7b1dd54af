/**
 * Waiting for a page to be at rest (src/browser/settle.ts) on real pages in real
 * Chromium: a CSS transition of about half a second, a View Transition, a web font and
 * an image that arrive late, and a page that never settles (a canvas animating forever
 * beside an endless CSS spinner), which is captured at the bound.
 */

import { type BrowserContext, errors, type Page } from "playwright";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import {
  type PageActivity,
  pageSettleProbe,
  RequestsInFlight,
  readPageActivity,
  type SettleProbe,
  type SettleTimings,
  waitUntilAtRest,
} from "../../src/browser/settle.ts";
import { endStillnessLooks, stillnessScreen } from "../../src/browser/stillness-look.ts";
import { SETTLE_PAGES_DIR, type SlowServer, startSlowServer } from "../support/slow-server.ts";

/** Generous bound for late files (they arrive after 1.2 s), a short one for the page that never settles. */
const TIMINGS: SettleTimings = { minWaitMs: 0, quietWindowMs: 300, pollIntervalMs: 100, boundMs: 8000 };
const SHORT_BOUND = 2000;

/** What a scripted probe's page reports: nothing running or loading, the given layout. */
const quietActivity = (layout: string): PageActivity => ({
  runningAnimations: 0,
  endlessAnimations: 0,
  viewTransition: false,
  fontsLoading: false,
  imagesLoading: 0,
  layout,
});

/** Resolves once the page has painted what its script changed (the second animation frame after). */
function painted(page: Page): Promise<void> {
  return page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

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

describe("the stillness look", () => {
  it("sees a one-pixel change anywhere, looks where the page is scrolled, and ignores a blinking caret", async () => {
    const page = await context.newPage();
    await page.setContent(
      `<body style="margin:0;background:#fff"><div style="height:3000px;background:linear-gradient(#fff,#eef)"></div>` +
        `<div id="dot" style="position:absolute;width:1px;height:1px;background:#999;display:none"></div>` +
        `<input id="field" style="position:fixed;left:20px;top:20px"></body>`,
    );
    // Each look waits until the page has painted the change made before it: a look taken
    // right after a repaint can differ from the settled picture by one grey level for a frame
    // or two (stillnessScreen's comment has the measurement), which would fail the equality below.
    const look = async () => {
      await painted(page);
      return stillnessScreen(page, 10_000);
    };
    const still = await look();
    // Odd and even coordinates: half size must not drop every other pixel.
    for (const [x, y] of [
      [11, 13],
      [300, 200],
      [799, 399],
    ] as const) {
      await page.evaluate(
        ([left, top]) => Object.assign(document.getElementById("dot")!.style, { left: `${left}px`, top: `${top}px`, display: "block" }),
        [x, y],
      );
      expect((await look()).equals(still), `a dot at ${x},${y}`).toBe(false);
      await page.evaluate(() => Object.assign(document.getElementById("dot")!.style, { display: "none" }));
    }
    expect((await look()).equals(still)).toBe(true);
    // Scrolled, the look shows the new viewport: the dot 1,500 px down shows in it.
    await page.evaluate(() => window.scrollTo(0, 1400));
    const scrolled = await look();
    await page.evaluate(() => Object.assign(document.getElementById("dot")!.style, { left: "400px", top: "1500px", display: "block" }));
    expect((await look()).equals(scrolled)).toBe(false);
    // A focused field blinks its caret about twice a second: looks over 1.2 s are all the same.
    await page.focus("#field");
    const looks = new Set<string>();
    for (let index = 0; index < 8; index++) {
      looks.add((await look()).toString("base64"));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(looks.size).toBe(1);
    await endStillnessLooks(page, 10_000);
    expect(await page.evaluate(() => document.querySelectorAll("style").length)).toBe(0);
    await page.close();
  });

  it("gives up on a page that does not answer with Playwright's timeout error, as its screenshot did", async () => {
    const own = await (await sharedBrowser()).newContext({ viewport: { width: 800, height: 400 } });
    try {
      const page = await own.newPage();
      await page.setContent("<p>busy</p>");
      void page
        .evaluate(() => {
          for (;;) {
            // The page's one thread never comes back.
          }
        })
        .catch(() => undefined);
      await expect(stillnessScreen(page, 300)).rejects.toBeInstanceOf(errors.TimeoutError);
    } finally {
      await own.close();
    }
  });

  it("does not wait for a frame that has no document yet (a lazy iframe far out of view)", async () => {
    const page = await context.newPage();
    await page.setContent(`<body style="margin:0"><p>top</p><iframe loading="lazy" style="margin-top:6000px" srcdoc="<input>"></iframe></body>`);
    expect(page.frames().length).toBe(2);
    const started = Date.now();
    const look = await stillnessScreen(page, 10_000);
    expect(look.length).toBeGreaterThan(0);
    await endStillnessLooks(page, 10_000);
    expect(Date.now() - started).toBeLessThan(3000);
    await page.close();
  });

  it("reads the layout at every poll between the looks: a box that moves opens a new window at once", async () => {
    const looks: number[] = [];
    const started = Date.now();
    const probe: SettleProbe = {
      // The layout changes once, 150 ms in; the picture never does.
      activity: async () => quietActivity(Date.now() - started < 150 ? "1:a" : "1:b"),
      screen: async () => {
        looks.push(Date.now() - started);
        return Buffer.from("same");
      },
      requestsInFlight: () => 0,
      release: async () => undefined,
    };
    const settle = await waitUntilAtRest(probe, { minWaitMs: 0, quietWindowMs: 300, pollIntervalMs: 100, boundMs: 5000 });
    expect(settle.atRest).toBe(true);
    // The window that opened at the first look closed at the poll that saw the move; the next one ran its 300 ms.
    expect(settle.waitedMs).toBeGreaterThanOrEqual(450);
    expect(looks).toHaveLength(3);
    expect(looks[1]! - looks[0]!).toBeLessThan(300);
  });

  it("sees a paint-only change inside a quiet window at the window's end, and waits a whole window after it", async () => {
    const page = await context.newPage();
    const requests = new RequestsInFlight(page);
    await page.setContent(`<canvas id="board" width="300" height="150"></canvas><script>
      const board = document.getElementById("board").getContext("2d");
      board.fillStyle = "#1040c0";
      board.fillRect(0, 0, 300, 150);
      window.repaint = () => { board.fillStyle = "#c01010"; board.fillRect(0, 0, 300, 150); };
    </script>`);
    // The canvas turns red right after the look that opens the first window; no box moves.
    const probe = pageSettleProbe(page, requests, 10_000);
    const looks: number[] = [];
    const started = Date.now();
    const watched: SettleProbe = {
      ...probe,
      screen: async () => {
        const screen = await probe.screen();
        looks.push(Date.now() - started);
        if (looks.length === 1) await page.evaluate(() => (window as unknown as { repaint: () => void }).repaint());
        return screen;
      },
    };
    const settle = await waitUntilAtRest(watched, { minWaitMs: 0, quietWindowMs: 300, pollIntervalMs: 100, boundMs: 5000 });
    expect(settle.atRest).toBe(true);
    // The look closing the first window saw red and opened a second; the third look closed that one.
    expect(looks).toHaveLength(3);
    expect(settle.waitedMs).toBeGreaterThanOrEqual(600);
    const still = await stillnessScreen(page, 10_000);
    // A pixel inside the canvas (at 40, 40 on the page; the look is half size).
    const { data, info } = await sharp(still).raw().toBuffer({ resolveWithObject: true });
    const at = (20 * info.width + 20) * info.channels;
    expect([data[at], data[at + 1], data[at + 2]]).toEqual([0xc0, 0x10, 0x10]);
    requests.dispose();
    await page.close();
  });

  it("looks again once a window while something is pending, so a repaint then is not held against the page for the rest of the wait", async () => {
    const looks: number[] = [];
    const started = Date.now();
    const probe: SettleProbe = {
      // A request stays in flight for 1 s; the picture changes once, 100 ms in, and then stays.
      activity: async () => quietActivity("1:a"),
      screen: async () => {
        looks.push(Date.now() - started);
        return Buffer.from(Date.now() - started < 100 ? "before" : "after");
      },
      requestsInFlight: () => (Date.now() - started < 1000 ? 1 : 0),
      release: async () => undefined,
    };
    const settle = await waitUntilAtRest(probe, { minWaitMs: 0, quietWindowMs: 300, pollIntervalMs: 100, boundMs: 5000 });
    expect(settle.atRest).toBe(true);
    // The repaint was seen by the look 300 ms in, while the request was pending: the window it
    // opened had run its course when the request ended, so the wait ends at the first poll after.
    expect(looks.length).toBeGreaterThanOrEqual(3);
    expect(looks[1]!).toBeLessThan(600);
    expect(settle.waitedMs).toBeGreaterThanOrEqual(1000);
    expect(settle.waitedMs).toBeLessThan(1250);
  });

  it("starts looking just before the last quiet window of the fixed wait, and releases the page however the wait ends", async () => {
    const looks: number[] = [];
    let released = 0;
    const started = Date.now();
    const stillPage: SettleProbe = {
      activity: async () => quietActivity("1:a"),
      screen: async () => {
        looks.push(Date.now() - started);
        return Buffer.from("same");
      },
      requestsInFlight: () => 0,
      release: async () => {
        released += 1;
      },
    };
    const settle = await waitUntilAtRest(stillPage, { minWaitMs: 1000, quietWindowMs: 300, pollIntervalMs: 100, boundMs: 5000 });
    expect(settle.atRest).toBe(true);
    expect(settle.waitedMs).toBeGreaterThanOrEqual(1000);
    // Looked at from 0.5 s on (1,000 − 300 − 2 × 100 ms), not during the first half second;
    // and the wait still ends as soon as it may.
    expect(looks[0]).toBeGreaterThanOrEqual(490);
    // A still page is looked at twice: where its quiet window opens and where it closes.
    expect(looks).toHaveLength(2);
    expect(settle.waitedMs).toBeLessThan(1250);
    expect(released).toBe(1);
    const broken: SettleProbe = { ...stillPage, screen: async () => Promise.reject(new Error("the page crashed")) };
    await expect(waitUntilAtRest(broken, { minWaitMs: 0, quietWindowMs: 300, pollIntervalMs: 100, boundMs: 5000 })).rejects.toThrow(/crashed/);
    expect(released).toBe(2);
  });
});
