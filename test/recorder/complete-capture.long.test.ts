/**
 * Complete capture (#15): a site made of many files records into a task whose reference
 * page renders as the site did, with every file the site served kept beside it; the
 * assets are the images the page showed (a hidden image is listed, not an asset; an
 * .ico is drawn by Chromium for its tile); a file the reference could not keep fails
 * the recording, naming it; a site that shows no image is refused by the preflight in
 * seconds, or recorded without assets when the script allows it.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { startStaticServer } from "../../src/browser/static-server.ts";
import { writeCalibrationCandidate } from "../../src/calibration/calibration.ts";
import { IwrError } from "../../src/errors.ts";
import { PROTOCOL } from "../../src/protocol.ts";
import { type RecordedTask, recordTask } from "../../src/recorder/record-task.ts";
import { candidateMounts } from "../../src/replay/candidate-serving.ts";
import { ASSET_PLACEHOLDER } from "../../src/tasks/inputs.ts";
import { loadTaskSet } from "../../src/tasks/loader.ts";
import { listTree, makeScratchDir, writeScript } from "../support/recorder-fixtures.ts";

const QUICK = { pauseBeforeMs: 50, pauseAfterMs: 600, pointerTravelMs: 40, keystrokeMs: 5 };
const scratch = makeScratchDir("complete-capture");

afterAll(async () => {
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

async function png(color: string, width = 120, height = 80): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();
}

/** An .ico holding one PNG image (the format allows it): Chromium draws it, sharp cannot read it. */
function icoOf(image: Buffer, side: number): Buffer {
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(1, 4);
  header.writeUInt8(side, 6);
  header.writeUInt8(side, 7);
  header.writeUInt16LE(1, 10);
  header.writeUInt16LE(32, 12);
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18);
  return Buffer.concat([header, image]);
}

function write(file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

const SCRIPT_BASE = {
  source_website: "fixture:multi-file-site",
  classification: { interaction_complexity: "L2", visual_complexity: "V2", domain: "testing" },
  resolution: "800x600",
};

/** A site in the shape real ones have: separate CSS, JS, a web font, a CSS background, an HTML fragment fetched by script. */
async function writeMultiFileSite(dir: string): Promise<void> {
  write(
    path.join(dir, "index.html"),
    `<!doctype html><html><head><meta charset="utf-8"><title>multi-file</title><link rel="stylesheet" href="css/site.css"></head>
<body><h1 class="brand">Multi file site</h1><img src="img/logo.png" width="120" height="80" alt="logo">
<img src="img/badge.ico" width="32" height="32" alt="badge"><img src="img/hidden.png" width="10" height="10" alt="" style="display:none">
<div class="banner">Banner</div><p><button id="more" type="button">More</button></p><div id="slot"></div>
<script src="js/app.js"></script></body></html>`,
  );
  write(
    path.join(dir, "css", "site.css"),
    `@font-face { font-family: "Brand"; src: url("../fonts/brand.ttf"); }
body { margin: 0; padding: 16px; background: #f1f5f9; font-family: sans-serif; }
.brand { font-family: "Brand", serif; color: #7c2d12; }
.banner { width: 300px; height: 60px; background: url("../img/bg.png") no-repeat; color: #fff; }
#slot .panel { margin-top: 12px; padding: 12px; background: #1d4ed8; color: #fff; width: 300px; }`,
  );
  write(
    path.join(dir, "js", "app.js"),
    `document.getElementById("more").addEventListener("click", async () => {
  const response = await fetch("parts/panel.html");
  // A picture whose URL is put together here: index.html never names it, the reference still shows it.
  const picture = "pi" + "c";
  document.getElementById("slot").innerHTML = (await response.text()) + '<img src="img/' + picture + '.png" width="60" height="40" alt="">';
});`,
  );
  write(path.join(dir, "parts", "panel.html"), `<div class="panel">Panel loaded from a fragment</div>`);
  const systemFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
  write(path.join(dir, "fonts", "brand.ttf"), fs.existsSync(systemFont) ? fs.readFileSync(systemFont) : Buffer.from("not a font"));
  write(path.join(dir, "img", "logo.png"), await png("#16a34a"));
  write(path.join(dir, "img", "bg.png"), await png("#9333ea", 300, 60));
  write(path.join(dir, "img", "hidden.png"), await png("#f59e0b", 10, 10));
  write(path.join(dir, "img", "pic.png"), await png("#0891b2", 60, 40));
  write(path.join(dir, "img", "badge.ico"), icoOf(await png("#dc2626", 16, 16), 16));
}

/** Mean absolute difference per channel (0..255) of two same-size images. */
async function meanDifference(a: Buffer | string, b: Buffer | string): Promise<number> {
  const [left, right] = await Promise.all([sharp(a).removeAlpha().raw().toBuffer(), sharp(b).removeAlpha().raw().toBuffer()]);
  expect(left.length).toBe(right.length);
  let total = 0;
  for (let index = 0; index < left.length; index++) total += Math.abs(left[index]! - right[index]!);
  return total / left.length;
}

describe("a site made of many files", () => {
  let caseDir: string;
  let jsonl: string;
  let recorded: RecordedTask;

  beforeAll(async () => {
    caseDir = fs.mkdtempSync(path.join(scratch, "multi-"));
    const siteDir = path.join(caseDir, "site");
    await writeMultiFileSite(siteDir);
    jsonl = path.join(caseDir, "set.jsonl");
    const script = writeScript(caseDir, "actions.yaml", {
      ...SCRIPT_BASE,
      actions: [
        { type: "Click", locator: "#more", description: "the 'More' button", assertion: "A blue panel appears", visual: true },
        { type: "Click", locator: ".banner", description: "the banner", assertion: "", visual: false },
        { type: "Click", locator: "h1", description: "the title", assertion: "", visual: true },
      ],
    });
    recorded = await recordTask({ script, site: siteDir, data: jsonl, pacing: QUICK });
  });

  it("keeps every file the site served beside the reference page, at its own path", () => {
    const kept = Object.fromEntries(recorded.captured.map((file) => [file.path, file.kind]));
    expect(kept).toMatchObject({
      "css/site.css": "stylesheet",
      "js/app.js": "script",
      "fonts/brand.ttf": "font",
      "img/bg.png": "image",
      "img/pic.png": "image",
      "parts/panel.html": "fetch",
    });
    for (const file of recorded.captured) expect(fs.existsSync(path.join(recorded.dir, "reference", file.path)), file.path).toBe(true);
    const notes = JSON.parse(fs.readFileSync(path.join(recorded.dir, "recording.json"), "utf8")) as {
      reference: { files: { path: string }[] };
      notShown: string[];
    };
    expect(notes.reference.files.map((file) => file.path).sort()).toEqual(Object.keys(kept).sort());
    expect(notes.notShown).toEqual(["img/hidden.png"]);
  });

  it("takes as assets the images the page showed, CSS backgrounds included, and draws the .ico through Chromium", async () => {
    const shown = recorded.assets.map((asset) => path.basename(new URL(asset.urls[0]!).pathname)).sort();
    expect(shown).toEqual(["badge.ico", "bg.png", "logo.png", "pic.png"]);
    expect(recorded.notShown.map((url) => new URL(url).pathname)).toEqual(["/img/hidden.png"]);
    expect(recorded.warnings.some((warning) => /\.ico \(drawn by Chromium as PNG for its tile\)/.test(warning))).toBe(true);
    // The sheet's ico tile is the red badge, not the grey "unreadable image" card.
    const sheet = await sharp(path.join(recorded.dir, "stitched_assets", "stitched_image_1.png"))
      .raw()
      .toBuffer({ resolveWithObject: true });
    let red = 0;
    for (let index = 0; index < sheet.data.length; index += sheet.info.channels)
      if (sheet.data[index]! > 200 && sheet.data[index + 1]! < 60 && sheet.data[index + 2]! < 60) red += 1;
    expect(red).toBeGreaterThan(100);
  });

  it("writes a reference page that, served as a candidate, renders like the site at every checkpoint", async () => {
    const set = await loadTaskSet(jsonl, { checkMedia: true });
    expect(set.problems).toEqual([]);
    const task = set.tasks[0]!;
    expect(fs.readFileSync(path.join(recorded.dir, "reference", "index.html"), "utf8")).toContain(`${ASSET_PLACEHOLDER}/`);
    const candidateDir = writeCalibrationCandidate(task, path.join(caseDir, "results"), "reference");
    const server = await startStaticServer({ mounts: candidateMounts(candidateDir, task.inputs.assetsDir) });
    const context = await (await sharedBrowser()).newContext({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1 });
    const missing: string[] = [];
    try {
      const page = await context.newPage();
      page.on("response", (response) => {
        if (response.status() >= 400) missing.push(response.url());
      });
      await page.goto(server.url("index.html"), { waitUntil: "load" });
      await page.waitForTimeout(PROTOCOL.initialSettleMs);
      expect(await meanDifference(await page.screenshot(), task.truth.checkpointPaths[0]!)).toBeLessThan(0.5);
      await page.click("#more");
      await page.waitForTimeout(PROTOCOL.actionSettleMs);
      expect(await meanDifference(await page.screenshot(), task.truth.checkpointPaths[1]!)).toBeLessThan(0.5);
    } finally {
      await context.close();
      await server.close();
    }
    expect(missing).toEqual([]);
  });
});

describe("a site of several pages, reaching for another local origin", () => {
  it("keeps the page the script navigates to, and refuses (and names) what another origin would serve", async () => {
    const caseDir = fs.mkdtempSync(path.join(scratch, "pages-"));
    const siteDir = path.join(caseDir, "site");
    write(
      path.join(siteDir, "index.html"),
      `<!doctype html><html><head><meta charset="utf-8"></head><body><img src="img/logo.png" width="120" height="80" alt="logo">
<p><a id="about" href="about.html">About us</a></p>
<script>const other = document.createElement("script"); other.src = "http://localhost:" + location.port + "/js/extra.js"; ` +
        `document.head.appendChild(other);</script></body></html>`,
    );
    write(
      path.join(siteDir, "about.html"),
      `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="css/about.css"></head>` +
        `<body><h1>About page</h1><a id="home" href="index.html">Home</a></body></html>`,
    );
    write(path.join(siteDir, "css", "about.css"), "h1 { color: #b91c1c; }");
    write(path.join(siteDir, "js", "extra.js"), "document.body.dataset.extra = 'yes';");
    write(path.join(siteDir, "img", "logo.png"), await png("#16a34a"));
    const script = writeScript(caseDir, "actions.yaml", {
      ...SCRIPT_BASE,
      actions: [
        { type: "Click", locator: "#about", description: "the 'About us' link", assertion: "The about page opens", visual: true },
        { type: "Click", locator: "h1", description: "the title", visual: false },
        { type: "Click", locator: "#home", description: "the 'Home' link", visual: true },
      ],
    });
    const recorded = await recordTask({ script, site: siteDir, data: path.join(caseDir, "set.jsonl"), pacing: QUICK });
    expect(recorded.captured.map((file) => file.path).sort()).toEqual(["about.html", "css/about.css", "img/logo.png"]);
    expect(fs.readFileSync(path.join(recorded.dir, "reference", "about.html"), "utf8")).toContain("About page");
    expect(recorded.warnings).toEqual([
      expect.stringMatching(/^blocked a request to http:\/\/localhost:\d+ \(only the site's own origin, http:\/\/127\.0\.0\.1:\d+, is recorded\)$/),
    ]);
  });
});

describe("what the recorder refuses", () => {
  it("fails a site whose file the reference could not keep, naming it, and leaves nothing behind", async () => {
    const caseDir = fs.mkdtempSync(path.join(scratch, "reserved-"));
    const siteDir = path.join(caseDir, "site");
    await writeMultiFileSite(siteDir);
    // eval.json is a record's name in a candidate folder: a site file there could not be served with the reference.
    write(path.join(siteDir, "eval.json"), "{}");
    write(path.join(siteDir, "js", "app.js"), `fetch("eval.json");`);
    const script = writeScript(caseDir, "actions.yaml", {
      ...SCRIPT_BASE,
      actions: [
        { type: "Click", locator: "h1", description: "the title", visual: true },
        { type: "Click", locator: "h1", description: "the title", visual: false },
        { type: "Click", locator: "h1", description: "the title", visual: false },
      ],
    });
    const jsonl = path.join(caseDir, "out", "set.jsonl");
    const error = await recordTask({ script, site: siteDir, data: jsonl, pacing: QUICK }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IwrError);
    expect((error as IwrError).message).toMatch(/the site serves http:\/\/127\.0\.0\.1:\d+\/eval\.json, whose path 'eval\.json' the results folder reserves/);
    expect(listTree(path.join(caseDir, "out"))).toEqual([]);
  });

  const TEXT_ONLY_SCRIPT = {
    ...SCRIPT_BASE,
    actions: [
      { type: "Click", locator: "#go", description: "the 'Go' button", assertion: "The text says 'Gone'", visual: true },
      { type: "Click", locator: "h1", description: "the title", visual: false },
      { type: "Click", locator: "h1", description: "the title", visual: false },
    ],
  };

  function writeTextOnlySite(dir: string): void {
    write(
      path.join(dir, "index.html"),
      // Its only images are refused (another host) or missing (a 404): neither is an image shown.
      `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="missing.css"></head><body><h1>Text only</h1>
<img src="https://cdn.example.com/hero.png" width="40" height="40" alt="cdn"><img src="gone.png" width="40" height="40" alt="gone">
<p id="out">Waiting</p><button id="go" type="button">Go</button>` +
        `<script>document.getElementById("go").onclick = () => { document.getElementById("out").textContent = "Gone"; };</script></body></html>`,
    );
  }

  it("refuses a site that shows no image in its preflight, in under 5 s, before recording anything", async () => {
    const caseDir = fs.mkdtempSync(path.join(scratch, "no-image-"));
    writeTextOnlySite(path.join(caseDir, "site"));
    const script = writeScript(caseDir, "actions.yaml", TEXT_ONLY_SCRIPT);
    await sharedBrowser();
    const started = Date.now();
    const error = await recordTask({ script, site: path.join(caseDir, "site"), data: path.join(caseDir, "out", "set.jsonl"), pacing: QUICK }).catch(
      (caught: unknown) => caught,
    );
    const elapsedMs = Date.now() - started;
    expect(error).toBeInstanceOf(IwrError);
    expect((error as IwrError).message).toMatch(/shows no image on its first screen \(preflight, \d+ ms\).*allow_no_images: true/);
    expect(elapsedMs).toBeLessThan(5000);
    expect(listTree(path.join(caseDir, "out"))).toEqual([]);
  });

  it("records the same site without assets when the script allows it, warning about its missing stylesheet", async () => {
    const caseDir = fs.mkdtempSync(path.join(scratch, "no-image-allowed-"));
    writeTextOnlySite(path.join(caseDir, "site"));
    const script = writeScript(caseDir, "actions.yaml", { ...TEXT_ONLY_SCRIPT, allow_no_images: true });
    const jsonl = path.join(caseDir, "set.jsonl");
    const recorded = await recordTask({ script, site: path.join(caseDir, "site"), data: jsonl, pacing: QUICK });
    expect(recorded.assets).toEqual([]);
    expect(recorded.sheetCount).toBe(0);
    expect(recorded.warnings.filter((warning) => warning.includes("missing.css"))).toEqual([
      expect.stringMatching(/^the site failed to load http:\/\/127\.0\.0\.1:\d+\/missing\.css \(HTTP 404\)$/),
    ]);
    expect(recorded.warnings).toContain(
      "blocked a request to https://cdn.example.com (only the site's own origin, " +
        new URL(recorded.warnings.find((warning) => warning.includes("missing.css"))!.split(" ")[5]!).origin +
        ", is recorded)",
    );
    const set = await loadTaskSet(jsonl, { checkMedia: true });
    expect(set.problems).toEqual([]);
    expect(set.warnings.map((warning) => warning.message).join("\n")).toMatch(/no asset sheet and no asset: the page shows no image/);
  });
});
