import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import type { SandboxedPage } from "../../src/browser/hosted-page.ts";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { type StaticServer, startStaticServer } from "../../src/browser/static-server.ts";
import { IwrError } from "../../src/errors.ts";
import { makeTempDir, NORMAL_ASSETS_DIR, NORMAL_SITE_DIR } from "../support/browser-fixtures.ts";

const RESOLUTION = { width: 1000, height: 600 };
const TIMEOUTS = { navigationMs: 5_000, actionMs: 3_000, screenshotMs: 5_000 };
const MOUNTS = [
  { urlPath: "/", dir: NORMAL_SITE_DIR },
  { urlPath: "/assets/", dir: NORMAL_ASSETS_DIR },
];

async function pixelAt(png: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const offset = (y * info.width + x) * info.channels;
  return [...data.subarray(offset, offset + 3)];
}

afterAll(async () => {
  await closeSharedBrowser();
});

describe("sandboxed page host: a well-behaved page", () => {
  let sandbox: SandboxedPage;
  let tempDir: string;
  const tracePath = () => path.join(tempDir, "traces", "normal.zip");

  beforeAll(async () => {
    tempDir = makeTempDir("host");
    sandbox = await openSandboxedPage({ mounts: MOUNTS, entry: "index.html", resolution: RESOLUTION, timeouts: TIMEOUTS, tracePath: tracePath() });
  });

  afterAll(async () => {
    await sandbox.close();
    fs.rmSync(tempDir, { recursive: true, force: true });
  });

  it("opens from its own 127.0.0.1 server without a load error or incident", () => {
    expect(sandbox.loadError).toBeUndefined();
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/index\.html$/);
    expect(sandbox.page.url()).toBe(sandbox.url);
    expect(sandbox.incidents).toEqual([]);
    expect(sandbox.isAlive()).toBe(true);
  });

  it("loads an asset from a second mounted folder through a relative link", async () => {
    const width = await sandbox.withTimeout("logo width", 3_000, () => sandbox.page.locator("#logo").evaluate((image: HTMLImageElement) => image.naturalWidth));
    expect(width).toBe(32);
  });

  it("takes a viewport screenshot at exactly the task's resolution, showing the page", async () => {
    const png = await sandbox.screenshot();
    const meta = await sharp(png).metadata();
    expect(meta.format).toBe("png");
    expect([meta.width, meta.height]).toEqual([RESOLUTION.width, RESOLUTION.height]);
    expect(await pixelAt(png, 45, 45)).toEqual([0, 128, 0]); // the green button
    expect(await pixelAt(png, 250, 45)).toEqual([220, 20, 20]); // the red mounted image
    expect(await pixelAt(png, 900, 500)).toEqual([255, 255, 255]);
  });

  it("runs clicks and reads the result", async () => {
    await sandbox.withTimeout("click", 3_000, () => sandbox.page.click("#counter-button"));
    await sandbox.withTimeout("click", 3_000, () => sandbox.page.click("#counter-button"));
    const text = await sandbox.withTimeout("read", 3_000, () => sandbox.page.textContent("#counter-button"));
    expect(text).toBe("Clicked 2 times");
  });

  it("closes a target=_blank window and records it as a popup, keeping the page", async () => {
    await sandbox.withTimeout("click link", 3_000, () => sandbox.page.click("#new-tab"));
    await expect.poll(() => sandbox.incidentCounts.popup, { timeout: 5_000 }).toBe(1);
    expect(sandbox.incidents.find((incident) => incident.kind === "popup")?.detail).toMatch(/a new window was opened/);
    await expect.poll(() => sandbox.context.pages().length, { timeout: 5_000 }).toBe(1);
    expect(sandbox.isAlive()).toBe(true);
  });

  it("turns a slow wait on a responsive page into PAGE_TIMEOUT without tearing the page down", async () => {
    const failure = await sandbox
      .withTimeout("wait for a missing element", 500, () => sandbox.page.waitForSelector("#never-there", { timeout: 10_000 }))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(IwrError);
    expect((failure as IwrError).code).toBe("PAGE_TIMEOUT");
    expect((failure as IwrError).details).toEqual({ label: "wait for a missing element", ms: 500, tornDown: false });
    expect(sandbox.incidents.at(-1)).toMatchObject({ kind: "timeout", detail: "wait for a missing element did not finish within 500 ms" });
    expect(sandbox.isAlive()).toBe(true);
    expect(await sandbox.withTimeout("read", 3_000, () => sandbox.page.textContent("#counter-button"))).toBe("Clicked 2 times");
  });

  it("saves the trace atomically on close, and close can be called again", async () => {
    await sandbox.close();
    await sandbox.close();
    expect(sandbox.isAlive()).toBe(false);
    const trace = fs.readFileSync(tracePath());
    expect(trace.subarray(0, 2).toString()).toBe("PK");
    expect(fs.readdirSync(path.dirname(tracePath()))).toEqual(["normal.zip"]);
    await expect(sandbox.screenshot()).rejects.toThrow(/already closed/);
  });
});

describe("sandboxed page host: options and entry errors", () => {
  let server: StaticServer;

  beforeAll(async () => {
    server = await startStaticServer({ mounts: MOUNTS });
  });

  afterAll(async () => {
    await server.close();
  });

  it("reports an entry that answers 404 as a load error", async () => {
    const sandbox = await openSandboxedPage({ server, entry: "missing.html", resolution: RESOLUTION, timeouts: TIMEOUTS });
    try {
      expect(sandbox.loadError).toMatchObject({ code: "BROWSER", details: { status: 404 } });
      expect(sandbox.loadError?.message).toMatch(/missing\.html answered HTTP 404/);
    } finally {
      await sandbox.close();
    }
    // The server was given, not owned: it still answers.
    expect((await fetch(server.url("index.html"))).status).toBe(200);
  });

  it("follows a redirect to the entry: the document's own status counts, not the redirect's", async () => {
    const site = makeTempDir("host-redirect");
    fs.mkdirSync(path.join(site, "sub"));
    fs.writeFileSync(path.join(site, "sub", "index.html"), "<!doctype html><title>inside</title><h1>inside the folder</h1>");
    const folders = await startStaticServer(site);
    // A folder's URL without its "/" answers 301 to the URL with it.
    const sandbox = await openSandboxedPage({ server: folders, entry: "sub", resolution: RESOLUTION, timeouts: TIMEOUTS });
    try {
      expect(sandbox.loadError).toBeUndefined();
      expect(sandbox.page.url()).toBe(`${folders.origin}/sub/`);
      expect(await sandbox.page.title()).toBe("inside");
    } finally {
      await sandbox.close();
      await folders.close();
      fs.rmSync(site, { recursive: true, force: true });
    }
  });

  it("reports an entry whose server is gone as a load error with the browser's reason", async () => {
    const gone = await startStaticServer(NORMAL_SITE_DIR);
    await gone.close();
    const sandbox = await openSandboxedPage({ server: gone, entry: "index.html", resolution: RESOLUTION, timeouts: TIMEOUTS });
    try {
      expect(sandbox.loadError).toMatchObject({ code: "BROWSER" });
      expect(sandbox.loadError?.message).toMatch(/^opening http:\/\/127\.0\.0\.1:\d+\/index\.html failed: net::ERR_CONNECTION_REFUSED/);
    } finally {
      await sandbox.close();
    }
  });

  it("rejects ambiguous sources and impossible resolutions before opening anything", async () => {
    await expect(openSandboxedPage({ server, root: NORMAL_SITE_DIR, entry: "index.html", resolution: RESOLUTION })).rejects.toThrow(
      /expected exactly one of server, root or mounts, got 2/,
    );
    await expect(openSandboxedPage({ entry: "index.html", resolution: RESOLUTION })).rejects.toThrow(/got 0/);
    await expect(openSandboxedPage({ server, entry: "index.html", resolution: { width: 0, height: 600 } })).rejects.toThrow(
      /resolution\.width: expected an integer 1\.\.8192, got 0/,
    );
  });
});
