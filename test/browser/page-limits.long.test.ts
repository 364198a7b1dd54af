/**
 * Limits a page cannot talk its way past, in real Chromium: a page whose renderer grows
 * past its memory limit (typed arrays, huge canvases) is torn down with PAGE_MEMORY
 * within about a second, its memory given back; a page that fires requests in a loop is
 * torn down as a request flood; a normal page opened beside them works throughout. When a
 * flood on the same browser goes past the number of request handles Playwright keeps (it
 * drops old ones then, and a reply naming a dropped one once ended the process), pages
 * opened meanwhile fail at most by being slow, and the browser works after.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import type { SandboxedPage } from "../../src/browser/hosted-page.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { rendererResidentMiB } from "../../src/browser/renderer-memory.ts";
import { deadEndProxy } from "../../src/browser/sandbox-guards.ts";
import { type StaticServer, startStaticServer } from "../../src/browser/static-server.ts";
import { IwrError } from "../../src/errors.ts";
import { HOSTILE_PAGES_DIR, NORMAL_SITE_DIR } from "../support/browser-fixtures.ts";

const RESOLUTION = { width: 800, height: 600 };
const LIMIT_MIB = 700;
/** How long a memory bomb may take to reach the limit. */
const GROWTH_MS = 60_000;
let hostile: StaticServer;
let normal: StaticServer;

beforeAll(async () => {
  hostile = await startStaticServer(HOSTILE_PAGES_DIR);
  normal = await startStaticServer(NORMAL_SITE_DIR);
});
afterAll(async () => {
  await Promise.all([hostile.close(), normal.close()]);
  await closeSharedBrowser();
});

async function waitForTeardown(sandbox: SandboxedPage, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (sandbox.isAlive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("memory limit", () => {
  for (const entry of ["arraybuffer-bomb.html", "canvas-bomb.html"]) {
    it(`${entry}: torn down with PAGE_MEMORY just past the limit, while a normal page beside it keeps working`, async () => {
      const neighbour = await openSandboxedPage({ server: normal, entry: "index.html", resolution: RESOLUTION });
      const started = Date.now();
      const sandbox = await openSandboxedPage({ server: hostile, entry, resolution: RESOLUTION, memoryLimitMiB: LIMIT_MIB });
      try {
        expect(sandbox.memory.unwatched).toBeUndefined();
        // Growing to the limit takes 5-10 s on an idle machine; beside other long tests it once took over 20 s.
        await waitForTeardown(sandbox, GROWTH_MS);
        expect(sandbox.tornDown).toMatchObject({ code: "PAGE_MEMORY", details: { reason: "memory", limitMiB: LIMIT_MIB } });
        const reading = /grew past its memory limit of 700 MiB \((\d+) MiB resident, growing (\d+) MiB a reading\); it was torn down/.exec(
          sandbox.tornDown?.message ?? "",
        );
        expect(reading, sandbox.tornDown?.message).not.toBeNull();
        expect(Date.now() - started).toBeLessThan(GROWTH_MS);
        // Read every 250 ms and stopped ahead of its growth: at the limit or two readings short of it at its
        // growth (how far short depends on how fast the machine let it grow), never gigabytes past it. The
        // message rounds both figures to whole MiB, so their sum may come out up to 1.5 MiB below the limit.
        const [resident, growth] = [Number(reading![1]), Number(reading![2])];
        expect(resident + 2 * growth).toBeGreaterThan(LIMIT_MIB - 1.5);
        expect(sandbox.memory.peakResidentMiB).toBeLessThan(LIMIT_MIB + 400);
        await expect(sandbox.screenshot()).rejects.toMatchObject({ code: "PAGE_MEMORY" });
        await sandbox.close();
        await neighbour.withTimeout("click", 20_000, () => neighbour.page.click("#counter-button"));
        expect(await neighbour.page.textContent("#counter-button")).toBe("Clicked 1 times");
      } finally {
        await sandbox.close();
        await neighbour.close();
      }
    });
  }

  it("records the limit and the peak of a normal page, which stays far below it", async () => {
    const sandbox = await openSandboxedPage({ server: normal, entry: "index.html", resolution: RESOLUTION, memoryLimitMiB: LIMIT_MIB });
    try {
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(sandbox.memory.limitMiB).toBe(LIMIT_MIB);
      expect(sandbox.memory.unwatched).toBeUndefined();
      expect(sandbox.memory.peakResidentMiB).toBeGreaterThan(20);
      expect(sandbox.memory.peakResidentMiB).toBeLessThan(LIMIT_MIB);
      expect(sandbox.isAlive()).toBe(true);
    } finally {
      await sandbox.close();
    }
    expect(rendererResidentMiB(process.pid)).toBeUndefined();
  });
});

describe("request flood", () => {
  /**
   * The flood is stopped when its requests pass the limit, so how soon depends on how fast the machine lets
   * it fire: a few seconds on an idle machine, 10.4 s beside two other long files in CI. The test's point
   * is the reason (request-flood, not a timeout) and that it ends at all; the bound only keeps it finite.
   */
  const FLOOD_TEARDOWN_MS = 30_000;
  it("a page firing requests in a loop is torn down as hostile within seconds, its blocked requests recorded", async () => {
    const started = Date.now();
    const sandbox = await openSandboxedPage({ server: hostile, entry: "request-flood.html", resolution: RESOLUTION });
    try {
      await waitForTeardown(sandbox, FLOOD_TEARDOWN_MS);
      expect(sandbox.tornDown).toMatchObject({ code: "PAGE_HOSTILE", details: { reason: "request-flood" } });
      expect(sandbox.tornDown?.message).toMatch(/made more than 2000 requests/);
      expect(Date.now() - started).toBeLessThan(FLOOD_TEARDOWN_MS);
      expect(sandbox.incidents.some((incident) => incident.kind === "blocked-request" && incident.detail.startsWith("fetch GET http://example.com/"))).toBe(
        true,
      );
    } finally {
      await sandbox.close();
    }
  });
});

describe("a flood past Playwright's request handle cap", () => {
  /** Playwright keeps this many handles of a kind per connection, then drops the oldest. */
  const PLAYWRIGHT_HANDLE_CAP = 10_000;
  const PAGE_READ_MS = 45_000;
  const NEIGHBOUR_PAUSE_MS = 3_000;
  const FLOOD_DEADLINE_MS = 600_000;

  /**
   * Opens a normal page on the shared browser and reads its button: "worked", or "timed out" when it
   * could not load or answer within PAGE_READ_MS. Slow is allowed while a flood shares the browser and,
   * in a full test:long run, other files share the two CPUs (a page once took over 30 s to load there);
   * any other failure (a broken connection, a handle Playwright no longer knows) is thrown.
   */
  async function readNeighbour(): Promise<"worked" | "timed out"> {
    const opened = await openSandboxedPage({ server: normal, entry: "index.html", resolution: RESOLUTION, timeouts: { navigationMs: PAGE_READ_MS } }).catch(
      (error: unknown) => {
        // The browser answered but took over its setup limit to open a blank page: slow, not broken.
        if (error instanceof IwrError && error.details?.reason === "slow-setup") return "timed out" as const;
        throw error;
      },
    );
    if (opened === "timed out") return opened;
    const page = opened;
    try {
      if (page.loadError?.code === "PAGE_TIMEOUT") return "timed out";
      expect(page.loadError).toBeUndefined();
      const text = await page
        .withTimeout("read the button", PAGE_READ_MS, () => page.page.textContent("#counter-button", { timeout: PAGE_READ_MS }))
        .catch((error: unknown) => {
          if (error instanceof IwrError && error.code === "PAGE_TIMEOUT") return "timed out" as const;
          throw error;
        });
      if (text === "timed out") return text;
      expect(text).toBe("Clicked 0 times");
      return "worked";
    } finally {
      await page.close();
    }
  }

  it(
    "pages opened on the same browser meanwhile fail only by being slow, nothing escapes as an uncaught error, and the browser works after",
    async () => {
      // A plain context, not a sandbox: the flood is not stopped at the sandbox's request limit and runs past the cap.
      const browser = await sharedBrowser();
      const floodContext = await browser.newContext({ proxy: deadEndProxy(hostile.origin) });
      // Playwright counts handles per kind, and the old bug named a dropped response handle: the flood must
      // take its responses past the cap. Only requests to its own server get one (a 404), so it fires only those.
      let responses = 0;
      floodContext.on("response", () => {
        responses += 1;
      });
      try {
        const flood = await floodContext.newPage();
        // A paced flood (4 requests to its own server every 10 ms): at full speed it saturates the browser, a
        // neighbour took 12 s to open on an idle machine, and queued requests got fewer responses (measured alone:
        // 2,356 responses in 20 s at 20 per tick, 5,569 at 4). Paced, with the neighbours below, its responses pass the cap in
        // about 75 s on an idle machine.
        await flood.goto(`${hostile.url("request-flood.html")}?burst=4&internet=0`);
        // The test ends on the count, not the clock; the deadline only stops a flood that stalled. Its rate
        // varies eightfold with the machine's load: 10,000 responses in about 75 s alone here, 8,655 in 240 s
        // beside two other long files in CI.
        const deadline = Date.now() + FLOOD_DEADLINE_MS;
        const outcomes: string[] = [];
        // Pages open two at a time until the flood is past the cap (at least four), so handles are dropped while
        // theirs are live. A reply naming a handle Playwright had dropped once threw in its message loop: that
        // would fail this file as an uncaught error. The exact race (a navigation whose reply comes after 9,000
        // newer responses) needs a slower page than this test can promise, so it is exercised, not forced.
        while (outcomes.length < 4 || (responses <= PLAYWRIGHT_HANDLE_CAP && Date.now() < deadline)) {
          outcomes.push(...(await Promise.all([readNeighbour(), readNeighbour()])));
          // A pause between pairs: each page costs the browser as much as hundreds of the flood's requests.
          await new Promise((resolve) => setTimeout(resolve, NEIGHBOUR_PAUSE_MS));
        }
        expect(responses).toBeGreaterThan(PLAYWRIGHT_HANDLE_CAP);
        console.log(
          `${outcomes.filter((outcome) => outcome === "worked").length} of ${outcomes.length} pages opened during the flood worked; the others timed out`,
        );
        await flood.close();
        // Past the cap, with the flood stopped, a page opens and takes a click within the usual limits.
        const last = await openSandboxedPage({ server: normal, entry: "index.html", resolution: RESOLUTION });
        try {
          expect(last.loadError).toBeUndefined();
          await last.withTimeout("click", PAGE_READ_MS, () => last.page.click("#counter-button"));
          expect(await last.page.textContent("#counter-button")).toBe("Clicked 1 times");
        } finally {
          await last.close();
        }
      } finally {
        await floodContext.close();
      }
    },
    FLOOD_DEADLINE_MS + 180_000,
  );
});
