/**
 * The bundled suite's sites and action scripts, checked before anything is recorded:
 * each site loads in real Chromium without leaving 127.0.0.1 or throwing, follows
 * the `.btn` convention, and its script replays step by step with every locator
 * matching exactly one element and every quoted literal of an assertion on screen.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { startStaticServer } from "../../src/browser/static-server.ts";
import { parseResolution } from "../../src/tasks/schema.ts";
import { auditButtons, type ButtonAudit, literalsMissingFromView, quotedLiterals, replayScript } from "../support/sites-replay.ts";
import { loadSuiteScripts, SITES_DIR } from "../support/sites-scripts.ts";

const scripts = loadSuiteScripts();
/**
 * Short settle: the sites update the DOM synchronously and have no transitions, so
 * this only lets a keyboard scroll land; the suite must stay fast.
 */
const TEST_SETTLE_MS = 60;

let browser: Browser;
beforeAll(async () => {
  browser = await sharedBrowser();
});
afterAll(async () => {
  await closeSharedBrowser();
});

describe("the bundled suite as a whole", () => {
  it("has at least 10 sites, each driven by exactly one script, with distinct ids", () => {
    const siteNames = fs.readdirSync(SITES_DIR).filter((name) => fs.existsSync(path.join(SITES_DIR, name, "index.html")));
    expect(siteNames.length).toBeGreaterThanOrEqual(10);
    const driven = scripts.map(({ siteDir }) => path.basename(siteDir)).sort();
    expect(driven).toEqual([...siteNames].sort());
    const ids = scripts.map(({ script }) => script.id);
    expect(ids.every((id) => typeof id === "number")).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("covers every interaction and visual class at least twice and mixes all action types", () => {
    const count = (values: string[]) => {
      const counts: Record<string, number> = {};
      for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
      return counts;
    };
    const interaction = count(scripts.map(({ script }) => script.classification.interaction_complexity));
    const visual = count(scripts.map(({ script }) => script.classification.visual_complexity));
    for (const level of ["L1", "L2", "L3", "L4"]) expect(interaction[level] ?? 0, level).toBeGreaterThanOrEqual(2);
    for (const level of ["V1", "V2", "V3", "V4"]) expect(visual[level] ?? 0, level).toBeGreaterThanOrEqual(2);
    const types = new Set(scripts.flatMap(({ script }) => script.actions.map((action) => action.type)));
    expect([...types].sort()).toEqual(["Click", "Press", "Scroll", "Type"]);
    expect(new Set(scripts.map(({ script }) => script.classification.domain)).size).toBeGreaterThanOrEqual(6);
  });

  it("keeps the sites' images small (under 3 MB in total)", () => {
    let total = 0;
    for (const site of fs.readdirSync(SITES_DIR)) {
      const imageDir = path.join(SITES_DIR, site, "img");
      if (!fs.existsSync(imageDir)) continue;
      for (const file of fs.readdirSync(imageDir)) total += fs.statSync(path.join(imageDir, file)).size;
    }
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(3 * 1024 * 1024);
  });
});

// Sites are independent (own server, own browser context): replay them concurrently.
describe.concurrent.each(scripts)("site $name", ({ name, siteDir, script }) => {
  const html = fs.readFileSync(path.join(siteDir, "index.html"), "utf8");

  it("is one self-contained, deterministic file", ({ expect }) => {
    // No external URL of any kind (fonts, CDNs, images): only relative paths.
    expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/i);
    // Nothing that changes by itself between two loads or while a checkpoint is taken.
    expect(html).not.toMatch(/Math\.random|new Date|Date\.now|setInterval|requestAnimationFrame|@keyframes|animation\s*:/);
    for (const reference of html.matchAll(/img\/([\w.-]+\.(?:png|jpg))/g)) {
      expect(fs.existsSync(path.join(siteDir, "img", reference[1]!)), `img/${reference[1]} exists`).toBe(true);
    }
  });

  it("loads offline, follows the .btn convention, and replays its script", async ({ expect }) => {
    const server = await startStaticServer(siteDir);
    const resolution = parseResolution(script.resolution);
    const context = await browser.newContext({ viewport: resolution, serviceWorkers: "block" });
    const offsite: string[] = [];
    const failed: string[] = [];
    const errors: string[] = [];
    await context.route("**/*", async (route) => {
      const url = new URL(route.request().url());
      if (url.hostname !== "127.0.0.1") {
        offsite.push(url.href);
        await route.abort("blockedbyclient");
      } else {
        await route.continue();
      }
    });
    const page = await context.newPage();
    page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(`console error: ${message.text()}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    page.on("dialog", (dialog) => {
      errors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    try {
      await page.goto(server.url("index.html"), { waitUntil: "load" });

      const layout = (await page.evaluate(
        `({
        overflowX: document.documentElement.scrollWidth - window.innerWidth,
        images: Array.from(document.images).map((img) => ({ src: img.getAttribute("src"), loaded: img.complete && img.naturalWidth > 0, ` +
          `sized: img.hasAttribute("width") && img.hasAttribute("height") })),
      })`,
      )) as { overflowX: number; images: { src: string; loaded: boolean; sized: boolean }[] };
      expect(layout.overflowX, "no horizontal scrolling at the task's width").toBeLessThanOrEqual(0);
      expect(
        layout.images.filter((image) => !image.loaded || !image.sized),
        "images load and declare width/height",
      ).toEqual([]);

      const audits: { state: string; audit: ButtonAudit }[] = [{ state: "initial", audit: await auditButtons(page) }];
      const reports = await replayScript(page, script.actions, {
        settleMs: TEST_SETTLE_MS,
        onStep: async (index) => {
          audits.push({ state: `after step ${index + 1}`, audit: await auditButtons(page) });
        },
      });

      expect(audits[0]!.audit.total, "the page has .btn elements").toBeGreaterThan(0);
      for (const { state, audit } of audits) {
        expect(audit.unmarked, `${name} ${state}: clickable elements without .btn`).toEqual([]);
        expect(audit.unreachable, `${name} ${state}: .btn elements out of reach`).toEqual([]);
      }
      for (const report of reports) {
        const step = `${name} step ${report.index + 1} (${report.action.type} "${report.action.description}")`;
        if (report.locatorMatches !== undefined) expect(report.locatorMatches, `${step}: locator matches`).toBe(1);
        if (report.action.type === "Scroll") expect(report.scrollYAfter - report.scrollYBefore, `${step}: scrolled`).toBeGreaterThan(5);
        expect(report.missingLiterals, `${step}: quoted text on screen after the step`).toEqual([]);
      }
      expect(offsite, "requests leaving 127.0.0.1").toEqual([]);
      expect(failed, "failed requests").toEqual([]);
      expect(errors, "page errors, console errors, dialogs").toEqual([]);
    } finally {
      await context.close();
      await server.close();
    }
  });
});

describe("the sites test's own checks", () => {
  it("finds quoted literals but not apostrophes inside words", () => {
    expect(quotedLiterals(`The badge shows '2' and the user's total reads "$59.98"`)).toEqual(["2", "$59.98"]);
    expect(quotedLiterals("Crosses' turn, no literal here")).toEqual([]);
  });

  it("reports a literal that is not on screen, and a .btn out of reach", async () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "iwr-sites-"));
    fs.writeFileSync(
      path.join(dir, "index.html"),
      `<!DOCTYPE html><body style="margin:0"><p>Visible words</p><p style="margin-top:2000px">Far below</p>` +
        `<button class="btn" style="position:absolute;left:1400px">Off to the side</button><a href="#x">Unmarked link</a></body>`,
    );
    const server = await startStaticServer(dir);
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    try {
      const page = await context.newPage();
      await page.goto(server.url("index.html"));
      expect(await literalsMissingFromView(page, ["visible WORDS", "Far below", "Absent"])).toEqual(["Far below", "Absent"]);
      const audit = await auditButtons(page);
      expect(audit.total).toBe(1);
      expect(audit.unreachable).toHaveLength(1);
      expect(audit.unmarked).toEqual(["a 'Unmarked link'"]);
    } finally {
      await context.close();
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
