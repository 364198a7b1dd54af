/**
 * Waiting for another process to write into a folder: a write wakes the waiter at once,
 * and a folder that cannot be watched still wakes it, after the fallback delay.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FolderWatch } from "../../src/media/folder-watch.ts";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-folder-watch-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function wakesAfter(watch: FolderWatch, act: () => void): Promise<number> {
  const started = performance.now();
  const woken = watch.changed();
  act();
  await woken;
  return performance.now() - started;
}

describe("folder watch", () => {
  it("wakes the waiter when a file is written, long before the fallback delay", async () => {
    const watch = new FolderWatch(dir, 5_000);
    try {
      expect(await wakesAfter(watch, () => fs.writeFileSync(path.join(dir, "frame.raw"), "x"))).toBeLessThan(2_000);
      expect(await wakesAfter(watch, () => watch.notify())).toBeLessThan(100);
    } finally {
      watch.close();
    }
  });

  it("a folder it cannot watch still wakes the waiter, after the fallback delay", async () => {
    const watch = new FolderWatch(path.join(dir, "not-there"), 50);
    try {
      const waited = await wakesAfter(watch, () => undefined);
      expect(waited).toBeGreaterThanOrEqual(40);
      expect(waited).toBeLessThan(2_000);
    } finally {
      watch.close();
    }
  });
});
