/**
 * The replay loop on a real candidate page in the sandboxed host (real Chromium):
 * evalpoints, the first-failure stop, the Scroll rule and the trace.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { createHeuristicGrounder } from "../../src/replay/grounding/heuristic.ts";
import { replayActionOf, replayTrajectory } from "../../src/replay/replay.ts";
import type { Action } from "../../src/tasks/schema.ts";
import { action, shoppingListPage, tempDir, writeCandidate } from "../support/evaluator-replay-fixtures.ts";

const RESOLUTION = { width: 640, height: 480 };
const dirs: string[] = [];

afterAll(async () => {
  await closeSharedBrowser();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function replayOn(html: string, actions: Action[]) {
  const dir = tempDir("replay");
  dirs.push(dir);
  const candidateDir = writeCandidate(path.join(dir, "candidate"), html);
  const tracePath = path.join(dir, "trace.zip");
  const evalpointsDir = path.join(dir, "evalpoints");
  const sandbox = await openSandboxedPage({ root: candidateDir, entry: "index.html", resolution: RESOLUTION, tracePath });
  try {
    const result = await replayTrajectory({ surface: sandbox, actions: actions.map(replayActionOf), grounder: createHeuristicGrounder(), evalpointsDir });
    const listText = await sandbox.page.locator("#list").innerText();
    return { result, listText, evalpointsDir, tracePath, sandbox };
  } finally {
    await sandbox.close();
  }
}

describe("replayTrajectory", () => {
  it("executes Click, Type, Press and Scroll, writing one evalpoint per action and a trace", async () => {
    const { result, listText, evalpointsDir, tracePath } = await replayOn(shoppingListPage(), [
      action({ type: "Click", description: "the 'Add favourites' button" }),
      action({ type: "Type", description: "the 'New item' text field", text: "Milk" }),
      action({ type: "Press", description: "press Enter to add it", key: "Enter" }),
      action({ type: "Scroll", description: "scroll down the page" }),
    ]);
    expect(result.error).toBeUndefined();
    expect(result.executed).toBe(4);
    expect(result.steps.map((step) => step.ok)).toEqual([true, true, true, true]);
    expect(result.steps[0]?.target?.text).toBe("Add favourites");
    expect(result.steps[1]?.target?.tag).toBe("input");
    expect(result.steps[1]?.typedText).toBe("Milk");
    expect(result.steps[3]?.scroll?.after).toBe(RESOLUTION.height / 2);
    expect(listText.split("\n")).toEqual(["Bread", "Cheese", "Milk"]);
    expect(fs.readdirSync(evalpointsDir).sort()).toEqual(["0.png", "1.png", "2.png", "3.png", "4.png"]);
    const meta = await sharp(path.join(evalpointsDir, "4.png")).metadata();
    expect([meta.width, meta.height]).toEqual([RESOLUTION.width, RESOLUTION.height]);
    expect(result.evalpoints).toHaveLength(5);
    // The trace is a zip (PK header) that `npx playwright show-trace` opens.
    expect(fs.readFileSync(tracePath).subarray(0, 2).toString()).toBe("PK");
  });

  it("stops at the first action whose description matches nothing", async () => {
    const { result, listText, evalpointsDir } = await replayOn(shoppingListPage(), [
      action({ type: "Click", description: "the blue 'Add' button" }),
      action({ type: "Click", description: "the 'Proceed to checkout' button" }),
      action({ type: "Click", description: "the 'Clear list' button" }),
    ]);
    expect(result.executed).toBe(1);
    expect(result.stoppedAt).toBe(1);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[1]?.ok).toBe(false);
    expect(result.steps[1]?.reason).toMatch(/grounding found no element for 'the 'Proceed to checkout' button'/);
    // The third action never ran: the item added by the first is still listed.
    expect(listText).toBe("Untitled");
    expect(fs.readdirSync(evalpointsDir).sort()).toEqual(["0.png", "1.png"]);
  });

  it("lists an evalpoint only with its file: a screen whose text cannot be read after its screenshot ends the replay with neither", async () => {
    const dir = tempDir("replay");
    dirs.push(dir);
    const candidateDir = writeCandidate(path.join(dir, "candidate"), shoppingListPage());
    const evalpointsDir = path.join(dir, "evalpoints");
    const sandbox = await openSandboxedPage({ root: candidateDir, entry: "index.html", resolution: RESOLUTION });
    try {
      // The screenshot works; reading the screen's text (as a page of 200,000 nodes can) does not.
      const surface = {
        page: sandbox.page,
        screenshot: () => sandbox.screenshot(),
        withTimeout: <T>(label: string, ms: number, run: () => Promise<T>): Promise<T> =>
          label === "read the screen text" ? Promise.reject(new Error("the screen text took too long")) : sandbox.withTimeout(label, ms, run),
      };
      const seen: number[] = [];
      const result = await replayTrajectory({
        surface,
        actions: [action({ type: "Click", description: "the 'Add favourites' button" })].map(replayActionOf),
        grounder: createHeuristicGrounder(),
        evalpointsDir,
        readScreenText: true,
        onEvalpoint: (index) => seen.push(index),
      });
      expect(result.error?.message).toMatch(/the screen text took too long/);
      expect(result.executed).toBe(0);
      expect(result.evalpoints).toHaveLength(0);
      expect(seen).toEqual([]);
      expect(fs.existsSync(path.join(evalpointsDir, "0.png"))).toBe(false);
    } finally {
      await sandbox.close();
    }
  });

  it("counts a Scroll only when window.scrollY moved by more than 5 px", async () => {
    const { result } = await replayOn(shoppingListPage({ tall: false }), [action({ type: "Scroll", description: "scroll down the page" })]);
    expect(result.executed).toBe(0);
    expect(result.steps[0]).toMatchObject({ ok: false, scroll: { before: 0, after: 0 } });
    expect(result.steps[0]?.reason).toMatch(/needs > 5/);
  });
});
