/**
 * The page mutation operators, each on the shopping-list page in real Chromium: what it
 * breaks, what it leaves working; and that each works on any page (no <head>, no <html>).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import type { SandboxedPage } from "../../src/browser/hosted-page.ts";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { type MutantSpec, mutantFolderName, mutatePage, parseMutantSpec } from "../../src/mutants/operators.ts";
import { shoppingListPage, tempDir } from "../support/evaluator-replay-fixtures.ts";

const RESOLUTION = { width: 640, height: 480 };
const dirs: string[] = [];
afterAll(async () => {
  await closeSharedBrowser();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** The shopping list with one image, mutated, opened in the sandbox. */
async function open(spec: MutantSpec | undefined): Promise<SandboxedPage> {
  const dir = tempDir("mutant");
  dirs.push(dir);
  const original = shoppingListPage().replace("<h1>", '<img src="logo.svg" width="40" height="40" alt="logo"><h1>');
  fs.writeFileSync(
    path.join(dir, "logo.svg"),
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="#c00"/></svg>',
  );
  fs.writeFileSync(path.join(dir, "index.html"), spec ? mutatePage(original, spec) : original);
  return openSandboxedPage({ root: dir, entry: "index.html", resolution: RESOLUTION });
}

const listItems = (sandbox: SandboxedPage) => sandbox.page.locator("#list li").allInnerTexts();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("behaviour operators", () => {
  it("freeze-after:1 lets the first click through and swallows the next, scrolling locked too", async () => {
    const sandbox = await open({ operator: "freeze-after", parameter: 1 });
    try {
      await sandbox.page.click("#add");
      expect(await listItems(sandbox)).toEqual(["Untitled"]);
      await pause(500);
      await sandbox.page.click("#add");
      await sandbox.page.fill("#item", "");
      await sandbox.page.locator("#item").type("Pears");
      expect(await listItems(sandbox)).toEqual(["Untitled"]);
      expect(await sandbox.page.inputValue("#item")).toBe("");
      const moved = await sandbox.page.evaluate(() => {
        window.scrollBy(0, 300);
        return window.scrollY;
      });
      expect(moved).toBe(0);
    } finally {
      await sandbox.close();
    }
  });

  it("no-script runs no script at all", async () => {
    const sandbox = await open({ operator: "no-script" });
    try {
      await sandbox.page.click("#add");
      expect(await listItems(sandbox)).toEqual([]);
      expect(sandbox.incidents.some((incident) => incident.kind === "console-error" && /Content Security Policy/.test(incident.detail))).toBe(true);
    } finally {
      await sandbox.close();
    }
  });

  it("lively-wrong swallows the click but outlines what was clicked", async () => {
    const sandbox = await open({ operator: "lively-wrong" });
    try {
      await sandbox.page.click("#add");
      expect(await listItems(sandbox)).toEqual([]);
      expect(await sandbox.page.locator("#add").evaluate((element) => (element as HTMLElement).style.outline)).toMatch(/solid/);
    } finally {
      await sandbox.close();
    }
  });

  // Once flaky under load (the typed "Pears" came back unchanged): the typed value was falsified when
  // focus left the field, then the page copied it into the list, where it was falsified again. The
  // pause lets those timers run first, as a loaded machine did.
  it("wrong-state runs the handlers but shows what they change wrong, never the user's own typing", async () => {
    const sandbox = await open({ operator: "wrong-state" });
    try {
      await sandbox.page.locator("#item").type("Pears");
      await sandbox.page.locator("#add").focus();
      await pause(400);
      expect(await sandbox.page.inputValue("#item")).toBe("Pears");
      await sandbox.page.click("#add");
      await expect.poll(() => listItems(sandbox), { timeout: 5_000 }).toEqual(["Crnef"]);
      expect(await sandbox.page.textContent("#status")).toBe("6 items");
      // What the page drew at load stays as it was.
      expect(await sandbox.page.textContent("h1")).toBe("Shopping list");
    } finally {
      await sandbox.close();
    }
  });
});

describe("appearance operators", () => {
  it("text:0.5 scrambles half the text nodes at load, deterministically; behaviour intact", async () => {
    const first = await open({ operator: "text", parameter: 0.5 });
    const second = await open({ operator: "text", parameter: 0.5 });
    const plain = await open(undefined);
    try {
      const [a, b, original] = await Promise.all([first, second, plain].map((sandbox) => sandbox.page.innerText("body")));
      expect(a).toBe(b);
      expect(a).not.toBe(original);
      expect(a?.length).toBe(original?.length);
      await first.page.click("#add");
      expect(await listItems(first)).toEqual(["Untitled"]);
    } finally {
      await Promise.all([first.close(), second.close(), plain.close()]);
    }
  });

  it("no-images, layout-shift and restyle change the picture, not the behaviour", async () => {
    const plain = await open(undefined);
    const baseline = await plain.screenshot();
    await plain.close();
    for (const operator of ["no-images", "layout-shift", "restyle"] as const) {
      const sandbox = await open({ operator });
      try {
        expect((await sandbox.screenshot()).equals(baseline), operator).toBe(false);
        await sandbox.page.click("#add");
        expect(await listItems(sandbox), operator).toEqual(["Untitled"]);
      } finally {
        await sandbox.close();
      }
    }
  });
});

describe("operator specs", () => {
  it("work on any page: no <head>, no <html>, or a doctype alone", () => {
    expect(mutatePage("<html><body>x</body></html>", { operator: "restyle" })).toMatch(/^<html><head><style data-iwr-mutant>/);
    expect(mutatePage("<p>x</p>", { operator: "no-script" })).toMatch(/^<meta http-equiv="Content-Security-Policy"/);
    expect(mutatePage("<!doctype html><p>x</p>", { operator: "no-images" })).toMatch(/^<!doctype html><style data-iwr-mutant>/);
  });

  it("are parsed with a precise message, and name their folder", () => {
    expect(parseMutantSpec("freeze-after:2")).toEqual({ operator: "freeze-after", parameter: 2 });
    expect(parseMutantSpec("text:0.3")).toEqual({ operator: "text", parameter: 0.3 });
    expect(mutantFolderName({ operator: "text", parameter: 0.3 })).toBe("mutant-text-0.3");
    expect(() => parseMutantSpec("freeze")).toThrow(/expected one of freeze-after:<k>, text:<p>, no-script/);
    expect(() => parseMutantSpec("freeze-after")).toThrow(/freeze-after needs a gesture count/);
    expect(() => parseMutantSpec("text:2")).toThrow(/text needs a share in \(0, 1\]/);
    expect(() => parseMutantSpec("restyle:1")).toThrow(/restyle takes no parameter/);
  });
});
