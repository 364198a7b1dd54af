/**
 * A key press reaches the page as it did when recorded (src/browser/key-focus.ts), on a
 * keyboard-driven canvas page (a ring moved by W/A/S/D, like MDN's bouncing balls) in the
 * sandboxed host. Something takes the focus away between the opening screenshot and the
 * key (a widget's frame grabs it, the focused frame disappears so the page has none, the
 * canvas loses it): with the recording's note of where the focus was, the replay gives it
 * back and the ring moves; without the note, the same press moves nothing.
 */
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright";
import { afterAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import type { KeyFocus } from "../../src/browser/key-focus.ts";
import { readKeyFocus } from "../../src/browser/key-focus.ts";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { MIN_CHANGED_PIXELS, pixelDiff } from "../../src/metrics/pixel-diff.ts";
import { PROFILE_RULES } from "../../src/protocol.ts";
import { createHeuristicGrounder } from "../../src/replay/grounding/heuristic.ts";
import { recordedReplayActionOf, replayTrajectory } from "../../src/replay/replay.ts";
import { ActionSchema } from "../../src/tasks/schema.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";
import { SETTLE_PAGES_DIR } from "../support/slow-server.ts";

const RESOLUTION = { width: 480, height: 360 };
const dirs: string[] = [];

afterAll(async () => {
  await closeSharedBrowser();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Ways the focus can go astray before the key, as the probe after the opening screenshot does them. */
const DISTURB = {
  "a child frame takes the focus": async (page: Page) => {
    await page.evaluate(async () => {
      // An invisible one, so the screen changes only by what the key does.
      const frame = document.createElement("iframe");
      frame.style.cssText = "position:absolute;left:0;top:0;width:1px;height:1px;border:0;opacity:0";
      frame.srcdoc = "<p>chat widget</p>";
      const loaded = new Promise((resolve) => frame.addEventListener("load", resolve));
      document.body.appendChild(frame);
      await loaded;
      frame.contentWindow?.focus();
    });
  },
  "the focused frame disappears, leaving the page without focus": async (page: Page) => {
    await DISTURB["a child frame takes the focus"](page);
    await page.evaluate(() => document.querySelector("iframe")?.remove());
  },
  "the canvas loses the focus": async (page: Page) => {
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  },
} as const;

async function pressAfter(disturb: keyof typeof DISTURB, entry: string, keyFocus: KeyFocus | undefined, profile: "corrected" | "official" = "corrected") {
  const dir = tempDir("key-focus");
  dirs.push(dir);
  const sandbox = await openSandboxedPage({ root: SETTLE_PAGES_DIR, entry, resolution: RESOLUTION });
  try {
    const press = ActionSchema.parse({
      type: "Press",
      parameters: { description: "Press the 'd' key to move the ring right", key: "d" },
      logical_assertion: "The ring moves right",
      visual_evaluation_flag: true,
      ...(keyFocus ? { key_focus: keyFocus } : {}),
    });
    const result = await replayTrajectory({
      surface: sandbox,
      style: PROFILE_RULES[profile],
      actions: [recordedReplayActionOf(press)],
      grounder: createHeuristicGrounder(),
      evalpointsDir: path.join(dir, "evalpoints"),
      probe: async (index, page) => {
        if (index === 0) await DISTURB[disturb](page);
      },
    });
    expect(result.executed).toBe(1);
    const [before, after] = result.evalpoints;
    const changed = (await pixelDiff(before!, after!)).changedPixels;
    return { step: result.steps[0]!, changed, focusAfter: await readKeyFocus(sandbox.page) };
  } finally {
    await sandbox.close();
  }
}

describe("a Press gets the focus the recording had", () => {
  it("takes the focus back from a child frame when the recording had it on the page", async () => {
    const { step, changed } = await pressAfter("a child frame takes the focus", "keyboard.html", { on: "page" });
    expect(step.keyFocusGiven).toMatch(/moved the focus from a child frame back to the page/);
    expect(step.keyReachedPage).toBe(true);
    expect(changed).toBeGreaterThan(MIN_CHANGED_PIXELS);
  });

  it("without the recording's note the key goes to the frame and nothing on the page changes", async () => {
    const { step, changed } = await pressAfter("a child frame takes the focus", "keyboard.html", undefined);
    expect(step.keyFocusGiven).toBeUndefined();
    expect(step.keyReachedPage).toBe(false);
    expect(changed).toBe(0);
  });

  it("gives focus to a page that has none, under either profile", async () => {
    for (const profile of ["corrected", "official"] as const) {
      const { step, changed, focusAfter } = await pressAfter(
        "the focused frame disappears, leaving the page without focus",
        "keyboard.html",
        { on: "page" },
        profile,
      );
      expect(step.keyFocusGiven, profile).toMatch(/gave the page focus \(it had none\)/);
      expect(focusAfter.documentHasFocus, profile).toBe(true);
      expect(step.keyReachedPage, profile).toBe(true);
      expect(changed, profile).toBeGreaterThan(MIN_CHANGED_PIXELS);
    }
  });

  it("focuses the element the recording names when no element has the focus", async () => {
    const note: KeyFocus = { on: "element", tag: "canvas", id: "board", label: "Game board" };
    const { step, changed } = await pressAfter("the canvas loses the focus", "keyboard-board.html", note);
    expect(step.keyFocusGiven).toMatch(/focused <canvas#board>/);
    expect(changed).toBeGreaterThan(MIN_CHANGED_PIXELS);

    const without = await pressAfter("the canvas loses the focus", "keyboard-board.html", undefined);
    expect(without.changed).toBe(0);
  });

  it("leaves the focus alone when it is where the recording had it", async () => {
    const note: KeyFocus = { on: "element", tag: "canvas", id: "board", label: "Game board" };
    const sandbox = await openSandboxedPage({ root: SETTLE_PAGES_DIR, entry: "keyboard-board.html", resolution: RESOLUTION });
    try {
      expect(await readKeyFocus(sandbox.page)).toEqual({ focus: note, documentHasFocus: true });
    } finally {
      await sandbox.close();
    }
    const { step, changed } = await pressAfter("the canvas loses the focus", "keyboard.html", { on: "page" });
    expect(step.keyFocusGiven).toBeUndefined();
    expect(changed).toBeGreaterThan(MIN_CHANGED_PIXELS);
  });
});
