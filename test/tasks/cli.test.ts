/**
 * `iwr tasks validate|list` and `iwr start` as a user runs them: a child process
 * of bin/iwr.js, checked by exit code and output.
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateAndList } from "../../src/cli/task-views.ts";
import { type TaskSetFixture, taskLine, writeJsonl, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const bin = path.join(repoRoot, "bin", "iwr.js");

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function iwr(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: repoRoot, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      // The console logger colours its level names even into a pipe.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character starts a colour code
      resolve({ code, stdout, stderr: stderr.replace(/\x1b\[[0-9;]*m/g, "") });
    });
  });
}

let root: string;
let good: TaskSetFixture;
let bad: TaskSetFixture;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "iwr-tasks-cli-"));
  good = await writeValidTaskSet(path.join(root, "good"), { count: 2, name: "suite", firstId: 3, assetCount: 4 });
  bad = await writeValidTaskSet(path.join(root, "bad"), { count: 2, name: "suite" });
  const tap = taskLine(1);
  tap.action_sequence[2]!.type = "Tap" as "Click";
  await writeJsonl(bad.jsonlPath, [tap, taskLine(2)]);
  await fs.writeFile(path.join(bad.taskDir(2), "video.mp4"), "");
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("iwr tasks validate", () => {
  it("prints every problem and exits 1", async () => {
    const result = await iwr("tasks", "validate", bad.jsonlPath);
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split("\n")).toEqual([
      `${bad.jsonlPath}:1: action_sequence[2].type: expected one of Click|Type|Scroll|Press, got 'Tap'`,
      `${bad.jsonlPath}:2: ${bad.taskDir(2)}/video.mp4: the video is empty (0 bytes)`,
      `2 problems in ${bad.jsonlPath}; 0 tasks OK`,
    ]);
  });

  it("says 'N tasks OK' and exits 0 for a valid set; --quiet hides info logs, --verbose shows debug", async () => {
    const [plain, quiet, verbose] = await Promise.all([
      iwr("tasks", "validate", good.jsonlPath),
      iwr("--quiet", "tasks", "validate", "--no-media", good.jsonlPath),
      iwr("--verbose", "tasks", "validate", "--no-media", good.jsonlPath),
    ]);
    for (const result of [plain, quiet, verbose]) {
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("2 tasks OK\n");
    }
    expect(plain.stderr).toMatch(/info: \[tasks\] checked /);
    expect(plain.stderr).not.toMatch(/debug:/);
    expect(quiet.stderr).toBe("");
    expect(verbose.stderr).toMatch(/debug: \[tasks\] loaded 2 task\(s\) from /);
  });

  it("reports a missing file", async () => {
    const missing = path.join(root, "absent.jsonl");
    const result = await iwr("tasks", "validate", "--no-media", missing);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${missing}: file not found\n`);
  });

  it("has --help", async () => {
    const result = await iwr("tasks", "validate", "--help");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage: iwr tasks validate [options] <data>");
    expect(result.stdout).toContain("--no-media");
  });
});

describe("iwr tasks list", () => {
  it("prints a table of the tasks", async () => {
    const result = await iwr("tasks", "list", good.jsonlPath);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")).toEqual([
      "id  domain             class  actions  video (s)  assets",
      "--  -----------------  -----  -------  ---------  ------",
      " 3  productivity/todo  L2/V1        4        2.0       4",
      " 4  productivity/todo  L2/V1        4        2.0       4",
      "",
    ]);
  });

  it("lists the good tasks and reports the bad ones on stderr with exit 1", async () => {
    const result = await iwr("tasks", "list", bad.jsonlPath);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`${bad.jsonlPath}:2: ${bad.taskDir(2)}/video.mp4: the video is empty (0 bytes)`);
  });

  it("has --help", async () => {
    const result = await iwr("tasks", "list", "--help");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage: iwr tasks list [options] <data>");
  });
});

describe("iwr start", () => {
  it("says clearly when the bundled suite is missing", async () => {
    const missing = path.join(root, "tasks", "iwr-mini.jsonl");
    const result = await iwr("start", "--data", missing);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no bundled suite at ${missing}: run npm run tasks:build`);
  });

  it("validates and lists a suite that exists (validateAndList, in process)", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await validateAndList(good.jsonlPath, { out: (text) => out.push(text), err: (text) => err.push(text) });
    expect(code).toBe(0);
    expect(err).toEqual([]);
    expect(out.join("\n")).toContain(" 3  productivity/todo  L2/V1        4        2.0       4");
    expect(out.at(-1)).toBe(`2 tasks OK in ${good.jsonlPath}`);
  });
});
