/**
 * The thorough media check of a task folder is kept when it found no problem, keyed by
 * the files' bytes: the same folder is not decoded again, a changed file is, and a
 * folder with a problem is checked again every time.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadTaskSet } from "../../src/tasks/loader.ts";
import { defaultMediaChecksDir } from "../../src/tasks/media-checks.ts";
import { formatProblem } from "../../src/tasks/problems.ts";
import { writeValidTaskSet } from "../support/tasks-fixtures.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-media-checks-"));
const previous = process.env.IWR_MEDIA_CHECKS_DIR;
let checksDir = root;
let caseNumber = 0;

const kept = () => (fs.existsSync(checksDir) ? fs.readdirSync(checksDir).filter((name) => name.endsWith(".json")) : []);

beforeEach(() => {
  checksDir = path.join(root, `checks-${++caseNumber}`);
  process.env.IWR_MEDIA_CHECKS_DIR = checksDir;
});
afterEach(() => {
  if (previous === undefined) delete process.env.IWR_MEDIA_CHECKS_DIR;
  else process.env.IWR_MEDIA_CHECKS_DIR = previous;
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("kept media checks", () => {
  it("keeps a check that passed and answers the next one from it, video facts included", async () => {
    const set = await writeValidTaskSet(path.join(root, `set-${caseNumber}`), { count: 2 });
    const first = await loadTaskSet(set.jsonlPath, { checkMedia: true });
    expect(first.problems).toEqual([]);
    expect(kept()).toHaveLength(2);

    // Mark the kept checks: the next check reports the mark, so it decoded nothing.
    for (const name of kept()) {
      const file = path.join(checksDir, name);
      const entry = JSON.parse(fs.readFileSync(file, "utf8"));
      fs.writeFileSync(file, JSON.stringify({ ...entry, warnings: ["kept check"] }));
    }
    const second = await loadTaskSet(set.jsonlPath, { checkMedia: true });
    expect(second.problems).toEqual([]);
    expect(second.warnings.map(formatProblem).every((line) => line.endsWith("kept check"))).toBe(true);
    expect(second.warnings).toHaveLength(2);
    expect([...second.videos.values()]).toEqual([...first.videos.values()]);
  }, 120_000);

  it("checks a folder again when a file changed, and never keeps a check that found a problem", async () => {
    const set = await writeValidTaskSet(path.join(root, `set-${caseNumber}`), { count: 1 });
    expect((await loadTaskSet(set.jsonlPath, { checkMedia: true })).problems).toEqual([]);
    expect(kept()).toHaveLength(1);

    const checkpoint = path.join(path.dirname(set.jsonlPath), "fixture", "1", "checkpoints", "step_0.png");
    const whole = fs.readFileSync(checkpoint);
    fs.writeFileSync(checkpoint, whole.subarray(0, Math.floor(whole.length / 2)));
    for (let attempt = 0; attempt < 2; attempt++) {
      const problems = (await loadTaskSet(set.jsonlPath, { checkMedia: true })).problems.map(formatProblem);
      expect(problems).toEqual([expect.stringContaining(`${checkpoint}: not a readable image`)]);
    }
    expect(kept()).toHaveLength(1);
  }, 120_000);

  it("takes its folder from IWR_MEDIA_CHECKS_DIR ('off' keeps nothing), else .cache/media-checks", () => {
    expect(defaultMediaChecksDir({ IWR_MEDIA_CHECKS_DIR: "/data/checks" })).toBe(path.resolve("/data/checks"));
    expect(defaultMediaChecksDir({ IWR_MEDIA_CHECKS_DIR: "off" })).toBeUndefined();
    expect(defaultMediaChecksDir({})).toBe(path.resolve(".cache", "media-checks"));
  });
});
