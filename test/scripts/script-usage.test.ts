/**
 * Issue #15 §5, scripts behave like commands: every `npm run` script run through tsx and
 * every scripts/*.ts, bench/*.ts entry point answers --help (a usage line, exit 0, no work)
 * and refuses an unknown option or a bad value with the usage line and exit code 2, no
 * stack trace. Each script is run as its own process, as `npm run` runs it; the `iwr`
 * commands (their own commander parser) are checked in this process.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import pLimit from "p-limit";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildProgram } from "../../src/cli/main.ts";
import { runIwrCapturing } from "../support/cli.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Files in scripts/ and bench/ that other scripts import and nobody runs. */
const HELPERS = [
  "scripts/cli-args.ts",
  "bench/machine-cpu.ts",
  "bench/process-tree-cpu.ts",
  "bench/run-support.ts",
  "bench/readings.ts",
  "bench/visible-text.ts",
];
/** Entry points run with tsx directly rather than through an npm script (each says how in its header). */
const RUN_DIRECTLY = ["scripts/make-site-images.ts"];
/** Two at a time: the machine has two cores and each run starts Node and tsx. */
const CONCURRENCY = 2;
const STACK_FRAME = /^ {4}at /m;

function packageScriptFiles(): string[] {
  const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts as Record<string, string>;
  return Object.values(scripts).flatMap((command) => /^tsx\s+(\S+\.ts)\b/.exec(command)?.[1] ?? []);
}

function entryPoints(): string[] {
  const inFolder = (folder: string) =>
    fs
      .readdirSync(path.join(ROOT, folder))
      .filter((name) => name.endsWith(".ts"))
      .map((name) => `${folder}/${name}`);
  return [...new Set([...packageScriptFiles(), ...inFolder("scripts"), ...inFolder("bench")])].filter((file) => !HELPERS.includes(file)).sort();
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runScript(file: string, args: readonly string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", file, ...args], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A bad value per script that takes values, refused before any work, and what the message says. */
const BAD_VALUES: Record<string, { args: string[]; says: string }> = {
  "scripts/build-tasks.ts": { args: ["no-such-script"], says: "no script named no-such-script" },
  "scripts/calibrate.ts": { args: ["--workers", "0"], says: "--workers: expected a positive integer, got '0'" },
  "bench/evaluator.ts": { args: ["--data", "no-such-suite.jsonl"], says: "--data: no-such-suite.jsonl does not exist" },
  "bench/ocr-engines.ts": { args: ["--data", "tasks/iwr-mini.jsonl,no-such-suite.jsonl"], says: "--data: no-such-suite.jsonl does not exist" },
  "bench/memory.ts": { args: ["--workers", "1,x"], says: "--workers: expected a positive integer, got 'x'" },
  "bench/selfcheck.ts": { args: ["--reuse"], says: "--reuse needs --result" },
  "bench/agent.ts": { args: ["--ids", "one"], says: "--ids: expected task ids" },
  "bench/run.ts": { args: ["--latency-ms", "soon"], says: "--latency-ms: expected a non-negative integer, got 'soon'" },
  "bench/rerun.ts": { args: ["--ids", ","], says: "--ids: expected task ids like 1,2,7" },
  "bench/queue.ts": { args: ["--ids", "x"], says: "--ids: expected task ids" },
};

const ENTRY_POINTS = entryPoints();
const outcomes = new Map<string, Outcome>();
const key = (file: string, args: readonly string[]) => `${file} ${args.join(" ")}`;

beforeAll(async () => {
  const limit = pLimit(CONCURRENCY);
  const runs = ENTRY_POINTS.flatMap((file) =>
    [["--help"], ["--no-such-option"], ...(BAD_VALUES[file] ? [BAD_VALUES[file].args] : [])].map((args) => ({ file, args })),
  );
  await Promise.all(runs.map(({ file, args }) => limit(async () => outcomes.set(key(file, args), await runScript(file, args)))));
}, 120_000);

describe("scripts behave like commands", () => {
  it("knows every script: each npm script's file exists, and each scripts/, bench/ file is an npm script, run directly, or a named helper", () => {
    const wired = packageScriptFiles();
    for (const file of [...wired, ...HELPERS, ...RUN_DIRECTLY]) expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true);
    // A new script that no npm script runs, or one that lost its npm script, is caught here.
    const inFolders = ["scripts", "bench"].flatMap((folder) =>
      fs
        .readdirSync(path.join(ROOT, folder))
        .filter((name) => name.endsWith(".ts"))
        .map((name) => `${folder}/${name}`),
    );
    expect(inFolders.filter((file) => !wired.includes(file) && !HELPERS.includes(file) && !RUN_DIRECTLY.includes(file))).toEqual([]);
    expect(Object.keys(BAD_VALUES).filter((file) => !ENTRY_POINTS.includes(file))).toEqual([]);
  });

  it.each(ENTRY_POINTS)("%s --help prints the usage and each option, exit 0", (file) => {
    const outcome = outcomes.get(key(file, ["--help"]))!;
    expect(outcome.stderr).not.toMatch(STACK_FRAME);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^usage: /);
    expect(outcome.stdout).toMatch(/^ {2}-h, --help +print this help and exit$/m);
  });

  it.each(ENTRY_POINTS)("%s --no-such-option is a usage error: the usage line, exit 2, no stack trace", (file) => {
    const outcome = outcomes.get(key(file, ["--no-such-option"]))!;
    expect(outcome.stderr).not.toMatch(STACK_FRAME);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain("--no-such-option");
    expect(outcome.stderr).toMatch(/^usage: /m);
    expect(outcome.stdout).toBe("");
  });

  it.each(Object.entries(BAD_VALUES))("%s with a bad value is a usage error saying what is wrong", (file, { args, says }) => {
    const outcome = outcomes.get(key(file, args))!;
    expect(outcome.stderr).not.toMatch(STACK_FRAME);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(says);
    expect(outcome.stderr).toMatch(/^usage: /m);
  });
});

describe("the iwr commands", () => {
  const output: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    output.length = 0;
    process.exitCode = undefined;
  });

  function commandPaths(command: Command, prefix: string[] = []): string[][] {
    return command.commands.flatMap((sub) => [[...prefix, sub.name()], ...commandPaths(sub, [...prefix, sub.name()])]);
  }
  const COMMANDS = [[], ...commandPaths(buildProgram())];

  it.each(COMMANDS.map((words) => [words.join(" ") || "(none)", words] as const))(
    "iwr %s: --help exits 0, an unknown option exits 2 with the usage",
    async (_name, words) => {
      expect(await runIwrCapturing(output, [...words, "--help"])).toBe(0);
      expect(output.join("")).toMatch(/^Usage: iwr/m);
      output.length = 0;
      expect(await runIwrCapturing(output, [...words, "--no-such-option"])).toBe(2);
      expect(output.join("")).toMatch(/^error: /m);
      expect(output.join("")).toMatch(/^Usage: iwr/m);
    },
  );
});
