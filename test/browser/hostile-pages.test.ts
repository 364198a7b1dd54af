/**
 * The hostile-page corpus: each page misbehaves in one way; each must end within its
 * time limit with what happened recorded, and the same process must still serve a
 * normal page afterwards.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { HOST_LIMITS, openSandboxedPage, type PageIncidentKind } from "../../src/browser/host.ts";
import type { SandboxedPage } from "../../src/browser/hosted-page.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { type StaticServer, startStaticServer } from "../../src/browser/static-server.ts";
import { IwrError } from "../../src/errors.ts";
import { HOSTILE_PAGES_DIR, NORMAL_ASSETS_DIR, NORMAL_SITE_DIR } from "../support/browser-fixtures.ts";

const RESOLUTION = { width: 800, height: 600 };
const TIMEOUTS = { navigationMs: 3_000, actionMs: 2_000, screenshotMs: 3_000 };
/** A teardown at its longest: three steps and the browser's probe, the browser dropped last (see teardown.ts). */
const TEARDOWN_MS = 3 * HOST_LIMITS.teardownStepMs + HOST_LIMITS.browserProbeMs;
const CLOSE_BOUND_MS = TEARDOWN_MS + 2_000;
/** Load: navigation, then at most two probes and a teardown; plus slack for a blank page's setup on a busy machine. */
const OPEN_BOUND_MS = TIMEOUTS.navigationMs + 2 * HOST_LIMITS.probeMs + TEARDOWN_MS + 5_000;

let hostileServer: StaticServer;
let normalServer: StaticServer;
const opened: SandboxedPage[] = [];

async function openHostile(entry: string): Promise<SandboxedPage> {
  const started = Date.now();
  const sandbox = await openSandboxedPage({ server: hostileServer, entry, resolution: RESOLUTION, timeouts: TIMEOUTS });
  opened.push(sandbox);
  expect(Date.now() - started, `opening ${entry}`).toBeLessThan(OPEN_BOUND_MS);
  return sandbox;
}

async function closeWithinBound(sandbox: SandboxedPage): Promise<void> {
  const started = Date.now();
  await sandbox.close();
  expect(Date.now() - started, `closing ${sandbox.url}`).toBeLessThan(CLOSE_BOUND_MS);
}

function details(sandbox: SandboxedPage, kind: PageIncidentKind): string[] {
  return sandbox.incidents.filter((incident) => incident.kind === kind).map((incident) => incident.detail);
}

async function rejection(promise: Promise<unknown>): Promise<IwrError> {
  const failure = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(IwrError);
  return failure as IwrError;
}

async function expectNormalPageWorks(): Promise<void> {
  const sandbox = await openSandboxedPage({ server: normalServer, entry: "index.html", resolution: RESOLUTION, timeouts: TIMEOUTS });
  try {
    expect(sandbox.loadError).toBeUndefined();
    const meta = await sharp(await sandbox.screenshot()).metadata();
    expect([meta.width, meta.height]).toEqual([RESOLUTION.width, RESOLUTION.height]);
    await sandbox.withTimeout("click", 3_000, () => sandbox.page.click("#counter-button"));
    expect(await sandbox.withTimeout("read", 3_000, () => sandbox.page.textContent("#counter-button"))).toBe("Clicked 1 times");
  } finally {
    await closeWithinBound(sandbox);
  }
}

beforeAll(async () => {
  // Launched up front, so the time limits below measure pages, not the browser's start.
  await sharedBrowser();
  hostileServer = await startStaticServer(HOSTILE_PAGES_DIR);
  normalServer = await startStaticServer({
    mounts: [
      { urlPath: "/", dir: NORMAL_SITE_DIR },
      { urlPath: "/assets/", dir: NORMAL_ASSETS_DIR },
    ],
  });
});

afterAll(async () => {
  await Promise.all(opened.map((sandbox) => sandbox.close()));
  await hostileServer.close();
  await normalServer.close();
  await closeSharedBrowser();
});

describe("hostile pages", () => {
  it("an endless loop at load: torn down with PAGE_TIMEOUT, later calls fail fast", async () => {
    const sandbox = await openHostile("infinite-loop.html");
    expect(sandbox.loadError).toMatchObject({ code: "PAGE_TIMEOUT", details: { label: "load", ms: TIMEOUTS.navigationMs } });
    expect(sandbox.loadError?.message).toMatch(/stopped responding/);
    expect(sandbox.tornDown).toEqual(sandbox.loadError);
    expect(details(sandbox, "timeout")).toEqual([`loading ${sandbox.url}: no load event within ${TIMEOUTS.navigationMs} ms`]);
    expect(sandbox.isAlive()).toBe(false);
    const started = Date.now();
    expect((await rejection(sandbox.screenshot())).code).toBe("PAGE_TIMEOUT");
    // Fails fast: far below the 3 s screenshot limit, with room for a busy machine.
    expect(Date.now() - started).toBeLessThan(2_000);
    await closeWithinBound(sandbox);
  });

  it("an endless loop started by a click: the action times out and the hung page is torn down", async () => {
    const sandbox = await openHostile("loop-on-click.html");
    expect(sandbox.loadError).toBeUndefined();
    const started = Date.now();
    const failure = await rejection(sandbox.withTimeout("click hang", 2_000, () => sandbox.page.click("#hang")));
    expect(Date.now() - started).toBeLessThan(2_000 + HOST_LIMITS.probeMs + TEARDOWN_MS + 2_000);
    expect(failure.code).toBe("PAGE_TIMEOUT");
    expect(failure.details).toEqual({ label: "click hang", ms: 2_000, tornDown: true });
    expect(sandbox.tornDown?.code).toBe("PAGE_TIMEOUT");
    expect(details(sandbox, "timeout")).toContain("click hang did not finish within 2000 ms");
    await closeWithinBound(sandbox);
  });

  it("an alert loop: every dialog dismissed and recorded, then torn down as hostile", async () => {
    const sandbox = await openHostile("alert-loop.html");
    // Normally the dialog cap ends it; a starved CPU may reach the load timeout first.
    await expect.poll(() => sandbox.tornDown?.code, { timeout: 10_000 }).toMatch(/^PAGE_(HOSTILE|TIMEOUT)$/);
    const dialogs = details(sandbox, "dialog");
    expect(dialogs.slice(0, 3)).toEqual(["alert: alert number 0", "alert: alert number 1", "alert: alert number 2"]);
    if (sandbox.tornDown?.code === "PAGE_HOSTILE") {
      expect(sandbox.tornDown.details).toMatchObject({ reason: "dialog-flood", count: HOST_LIMITS.maxDialogs + 1 });
      expect(sandbox.incidentCounts.dialog).toBeGreaterThan(HOST_LIMITS.maxDialogs);
    }
    await closeWithinBound(sandbox);
  });

  it("a window.open flood: windows closed and recorded, the page torn down", async () => {
    const sandbox = await openHostile("popup-flood.html");
    // A slow machine reaches the load timeout before the popup cap; either way the page goes.
    await expect.poll(() => sandbox.tornDown?.code, { timeout: 10_000 }).toMatch(/^PAGE_(HOSTILE|TIMEOUT)$/);
    expect(sandbox.incidentCounts.popup).toBeGreaterThan(0);
    expect(details(sandbox, "popup")[0]).toBe("a new window was opened at about:blank; closed");
    await closeWithinBound(sandbox);
    expect(sandbox.context.pages()).toEqual([]);
  });

  it("location set to an external site: the navigation is blocked and recorded, the page stays usable", async () => {
    const sandbox = await openHostile("external-location.html");
    expect(sandbox.loadError).toBeUndefined();
    await expect.poll(() => details(sandbox, "blocked-request"), { timeout: 5_000 }).toContain("document GET http://example.com/landing");
    await expect.poll(() => details(sandbox, "navigation"), { timeout: 5_000 }).toEqual(["the page is now at chrome-error://chromewebdata/"]);
    expect(sandbox.isAlive()).toBe(true);
    const meta = await sharp(await sandbox.screenshot()).metadata();
    expect(meta.width).toBe(RESOLUTION.width);
    await closeWithinBound(sandbox);
  });

  it("requests to the internet (stylesheet, image, fetch, websocket): each blocked and recorded", async () => {
    const sandbox = await openHostile("internet-requests.html");
    expect(sandbox.loadError).toBeUndefined();
    await expect.poll(() => sandbox.withTimeout("status", 2_000, () => sandbox.page.textContent("#status")), { timeout: 5_000 }).toBe("fetch blocked");
    await expect
      .poll(() => details(sandbox, "blocked-request").sort(), { timeout: 5_000 })
      .toEqual([
        "fetch GET https://example.com/api/data",
        "image GET https://images.example.com/logo.png",
        "stylesheet GET https://fonts.example.com/style.css",
        "websocket wss://socket.example.com/live",
      ]);
    // The dead-end proxy refused them inside the browser: the page saw its own loads fail.
    expect(details(sandbox, "console-error").some((detail) => /ERR_(?:PROXY|TUNNEL)_CONNECTION_FAILED/.test(detail))).toBe(true);
    await closeWithinBound(sandbox);
  });

  it("a service worker: registration is a no-op, recorded, and nothing intercepts the page's requests", async () => {
    const sandbox = await openHostile("service-worker.html");
    expect(sandbox.loadError).toBeUndefined();
    await expect.poll(() => sandbox.withTimeout("status", 2_000, () => sandbox.page.textContent("#status")), { timeout: 5_000 }).toBe("registrations: 0");
    expect(details(sandbox, "blocked-request")).toEqual([`service worker registration from ${sandbox.url}`]);
    expect(sandbox.context.serviceWorkers()).toEqual([]);
    const script = await sandbox.withTimeout("fetch", 2_000, () => sandbox.page.evaluate(() => fetch("sw.js").then((response) => response.text())));
    expect(script).toContain("addEventListener");
    await closeWithinBound(sandbox);
  });

  it("a 200,000-node DOM: either screenshots at full size or fails with a clean timeout", async () => {
    const sandbox = await openHostile("huge-dom.html");
    if (sandbox.loadError) {
      expect(sandbox.loadError.code).toBe("PAGE_TIMEOUT");
    } else {
      const started = Date.now();
      const shot = await sandbox.screenshot().then(
        (png) => png,
        (error: unknown) => error,
      );
      expect(Date.now() - started).toBeLessThan(TIMEOUTS.screenshotMs + HOST_LIMITS.probeMs + TEARDOWN_MS + 2_000);
      if (shot instanceof Buffer) {
        const meta = await sharp(shot).metadata();
        expect([meta.width, meta.height]).toEqual([RESOLUTION.width, RESOLUTION.height]);
        const nodes = await sandbox.withTimeout("count", 3_000, () => sandbox.page.evaluate(() => document.querySelectorAll("#host span").length));
        expect(nodes).toBe(200_000);
      } else {
        expect(shot).toBeInstanceOf(IwrError);
        expect((shot as IwrError).code).toBe("PAGE_TIMEOUT");
      }
    }
    await closeWithinBound(sandbox);
  });

  it("an error thrown at load: recorded as a page error, the page stays usable", async () => {
    const sandbox = await openHostile("throw-at-load.html");
    expect(sandbox.loadError).toBeUndefined();
    expect(details(sandbox, "page-error")).toHaveLength(1);
    expect(details(sandbox, "page-error")[0]).toMatch(/^Error: boom at load/);
    expect(await sandbox.withTimeout("read", 2_000, () => sandbox.page.textContent("#title"))).toBe("second script ran");
    await sandbox.withTimeout("click", 2_000, () => sandbox.page.click("#go"));
    expect(await sandbox.withTimeout("read", 2_000, () => sandbox.page.textContent("#title"))).toBe("clicked");
    await closeWithinBound(sandbox);
  });

  it("a renderer crash: recorded, torn down with PAGE_CRASHED, close still finishes", async () => {
    const sandbox = await openSandboxedPage({ server: normalServer, entry: "index.html", resolution: RESOLUTION, timeouts: TIMEOUTS });
    opened.push(sandbox);
    expect(sandbox.loadError).toBeUndefined();
    const session = await sandbox.context.newCDPSession(sandbox.page);
    void session.send("Page.crash").catch(() => undefined);
    await expect.poll(() => sandbox.tornDown?.code, { timeout: 5_000 }).toBe("PAGE_CRASHED");
    expect(details(sandbox, "crash")).toEqual(["the page's renderer crashed"]);
    expect((await rejection(sandbox.screenshot())).code).toBe("PAGE_CRASHED");
    await closeWithinBound(sandbox);
  });

  it("a renderer crash during a 30 s wait: the wait ends with the page, and its timer with it", async () => {
    const sandbox = await openSandboxedPage({ server: normalServer, entry: "index.html", resolution: RESOLUTION, timeouts: TIMEOUTS });
    opened.push(sandbox);
    const setTimer = vi.spyOn(globalThis, "setTimeout");
    const clearTimer = vi.spyOn(globalThis, "clearTimeout");
    try {
      // A call that never settles, even when its page goes (as a Playwright call on a context left
      // behind may not), waited for at most 30 s: the page dies in the middle of it.
      const waiting = rejection(sandbox.withTimeout("a call that never settles", 30_000, () => new Promise(() => undefined)));
      const index = setTimer.mock.calls.findIndex((call) => call[1] === 30_000);
      expect(index).toBeGreaterThanOrEqual(0);
      const timer = setTimer.mock.results[index]!.value as NodeJS.Timeout;
      const session = await sandbox.context.newCDPSession(sandbox.page);
      void session.send("Page.crash").catch(() => undefined);
      expect((await waiting).code).toBe("PAGE_CRASHED");
      // No timer of that wait is left to hold the process for up to 30 s.
      await expect.poll(() => clearTimer.mock.calls.some((call) => call[0] === timer), { timeout: 3_000 }).toBe(true);
    } finally {
      setTimer.mockRestore();
      clearTimer.mockRestore();
    }
    await closeWithinBound(sandbox);
  });

  it("after the whole corpus, a normal page in the same process still works", async () => {
    await expectNormalPageWorks();
  });
});
