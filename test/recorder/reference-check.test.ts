/**
 * The recorder refuses a reference page that cannot show what the recorded page showed:
 * an image whose URL the site builds in script never appears literally in the source,
 * so it cannot be rewritten to the assets folder and would 404 in the reference page.
 * The failure names the URL and leaves nothing behind; the same site with the URL
 * written out in full records, and its reference page names only placeholders.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { IwrError } from "../../src/errors.ts";
import { recordTask } from "../../src/recorder/record-task.ts";
import { findMediaReferences } from "../../src/recorder/reference.ts";
import { ASSET_PLACEHOLDER } from "../../src/tasks/schema.ts";
import { listTree, makeScratchDir } from "../support/recorder-fixtures.ts";
import { fileURLToPath } from "node:url";

const SITE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "recorder-script-image-site");
const SCRIPT = path.join(SITE, "actions.yaml");
const QUICK = { pauseBeforeMs: 50, pauseAfterMs: 600, pointerTravelMs: 40, keystrokeMs: 5 };

const scratch = makeScratchDir("reference-check");

afterAll(async () => {
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe("reference page completeness", () => {
  it("fails the recording, naming the image whose URL is built in script, and leaves no task behind", async () => {
    const caseDir = fs.mkdtempSync(path.join(scratch, "built-"));
    const jsonl = path.join(caseDir, "set.jsonl");
    let caught: unknown;
    try {
      await recordTask({ script: SCRIPT, data: jsonl, pacing: QUICK });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(IwrError);
    const error = caught as IwrError;
    expect(error.code).toBe("RECORDER");
    expect(error.message).toMatch(/the reference page cannot load 1 asset\(s\) the page loaded, because index\.html never names them literally/);
    expect(error.message).toMatch(/: img\/photo\.jpg\. Write each asset URL out in full/);
    // The literal logo resolved fine, so it is not among the named URLs.
    expect(error.message).not.toMatch(/logo\.png/);
    expect(listTree(caseDir)).toEqual([]);
  });

  it("records the same site once the URL is written out in full", async () => {
    const caseDir = fs.mkdtempSync(path.join(scratch, "literal-"));
    const siteDir = path.join(caseDir, "recorder-script-image-site");
    fs.cpSync(SITE, siteDir, { recursive: true });
    const indexFile = path.join(siteDir, "index.html");
    const built = fs.readFileSync(indexFile, "utf8");
    const literal = built
      .replace('const picture = "photo";', 'const PICTURES = { photo: "img/photo.jpg" };\n  const picture = "photo";')
      .replace(`'<img src="img/' + picture + '.jpg"`, `'<img src="' + PICTURES[picture] + '"`);
    expect(literal).not.toBe(built);
    fs.writeFileSync(indexFile, literal);

    const recorded = await recordTask({ script: path.join(siteDir, "actions.yaml"), data: path.join(caseDir, "set.jsonl"), pacing: QUICK });
    expect(recorded.assets.map((asset) => path.basename(new URL(asset.urls[0]!).pathname))).toEqual(["logo.png", "photo.jpg"]);
    const reference = fs.readFileSync(path.join(recorded.dir, "reference", "index.html"), "utf8");
    expect(findMediaReferences(reference)).toEqual([`${ASSET_PLACEHOLDER}/001.png`, `${ASSET_PLACEHOLDER}/002.jpg`]);
  });
});
