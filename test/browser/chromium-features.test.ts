/**
 * The browser we launch keeps Playwright's disabled features (Chromium reads only the last
 * --disable-features switch, and ours comes last) and serves each sandboxed page with one
 * renderer process, not three. Both are read from the real processes under /proc.
 */
import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { makeTempDir } from "../support/browser-fixtures.ts";

interface ProcessEntry {
  pid: number;
  parent: number;
  args: string[];
}

function processes(): ProcessEntry[] {
  return fs.readdirSync("/proc").flatMap((name) => {
    if (!/^\d+$/.test(name)) return [];
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      // Chromium rewrites its children's command lines into one space-separated string.
      const args = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split(/[\0 ]/).filter(Boolean);
      return [{ pid: Number(name), parent, args }];
    } catch {
      return []; // gone while we looked
    }
  });
}

/** This process's browser: the child Playwright started with a debugging pipe. */
function browserProcess(all: ProcessEntry[]): ProcessEntry {
  const found = all.filter((entry) => entry.parent === process.pid && entry.args.includes("--remote-debugging-pipe"));
  expect(found).toHaveLength(1);
  return found[0]!;
}

function renderersOf(browserPid: number, all: ProcessEntry[]): ProcessEntry[] {
  const descendants = new Set([browserPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of all) {
      if (descendants.has(entry.parent) && !descendants.has(entry.pid)) {
        descendants.add(entry.pid);
        grew = true;
      }
    }
  }
  return all.filter((entry) => descendants.has(entry.pid) && entry.args.includes("--type=renderer"));
}

const featureLists = (args: string[]) =>
  args.filter((arg) => arg.startsWith("--disable-features=")).map((arg) => arg.slice("--disable-features=".length).split(","));

afterAll(async () => {
  await closeSharedBrowser();
});

describe("the launched Chromium", () => {
  it("has its last --disable-features switch carry every feature an earlier one (Playwright's) disables", async () => {
    await sharedBrowser();
    const lists = featureLists(browserProcess(processes()).args);
    expect(lists.length).toBeGreaterThanOrEqual(2); // Playwright's, then ours
    const effective = lists.at(-1)!;
    for (const earlier of lists.slice(0, -1)) expect(effective).toEqual(expect.arrayContaining(earlier));
    expect(effective).toContain("HttpsUpgrades");
  });

  it("serves a sandboxed page with one renderer process, and keeps none after it closes", async () => {
    const dir = makeTempDir("chromium-features");
    fs.writeFileSync(`${dir}/index.html`, "<!doctype html><title>one</title><h1>One page</h1>");
    await sharedBrowser();
    const browserPid = browserProcess(processes()).pid;
    const page = await openSandboxedPage({ root: dir, entry: "index.html", resolution: { width: 800, height: 600 } });
    try {
      await page.page.screenshot();
      expect(renderersOf(browserPid, processes())).toHaveLength(1);
    } finally {
      await page.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await expect.poll(() => renderersOf(browserPid, processes()).length, { timeout: 10_000 }).toBe(0);
  });
});
