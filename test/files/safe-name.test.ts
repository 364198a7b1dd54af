/**
 * The one rule for names that become folders: through its public functions, and through
 * the CLI (a bad --model is refused before anything is read or written).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.ts";
import { IwrError } from "../../src/errors.ts";
import { assertDistinctFolderNames, folderNameProblem, modelFolderName, safeFolderName } from "../../src/files/safe-name.ts";
import { type TaskSetFixture, writeValidTaskSet } from "../support/tasks-fixtures.ts";

function refusal(run: () => unknown): IwrError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(IwrError);
    expect((error as IwrError).code).toBe("CONFIG_INVALID");
    return error as IwrError;
  }
  throw new Error("expected a refusal");
}

describe("safe folder names", () => {
  it("refuses '.', '..', empty and blank names, separators, NUL and control characters, hidden and overlong names", () => {
    for (const name of ["", "   ", ".", "..", "a/b", "a\\b", "nul\u0000byte", "tab\there", ".hidden", "x".repeat(201)]) {
      expect(folderNameProblem(name), JSON.stringify(name)).toBeDefined();
    }
    for (const name of ["gpt-4o", "qwen2.5-vl-72b", "llava:13b", "openai__gpt-4o", "Claude Sonnet 4 (thinking)", "模型"]) {
      expect(folderNameProblem(name), name).toBeUndefined();
    }
  });

  it("refuses names that are one folder on Linux but not on Windows or macOS, with the reason", () => {
    const cases: Array<[string, RegExp]> = [
      ["CON", /device name Windows reserves/],
      ["nul.txt", /device name Windows reserves/],
      ["Com1", /device name Windows reserves/],
      ["lpt9.tar.gz", /device name Windows reserves/],
      ["arm ", /ends with a space or a dot/],
      ["arm.", /ends with a space or a dot/],
      ["cafe\u0301", /not in Unicode NFC form/],
      ["report\u202Etxt.exe", /bidirectional control character/],
      ["a\u2066b", /bidirectional control character/],
    ];
    for (const [name, reason] of cases) expect(folderNameProblem(name), JSON.stringify(name)).toMatch(reason);
    // Not reserved: device names inside a longer name, the composed form, dots within.
    for (const name of ["console", "nullable", "com10", "café", "v1.5-arm", "aux-arm"]) expect(folderNameProblem(name), name).toBeUndefined();
  });

  it("quotes at most 200 characters of a refused name", () => {
    const message = refusal(() => safeFolderName(`${"n".repeat(50_000)}/x`, "--model")).message;
    expect(message.length).toBeLessThan(400);
    expect(message).toContain("(50002 characters)");
  });

  it("names where a refused name came from, and what the model name became", () => {
    expect(refusal(() => safeFolderName("..", "--model")).message).toBe(
      "--model: '..' cannot be used as a folder name: '..' names a folder itself, not one inside it",
    );
    // "/" is the benchmark's "__", so only a name that maps to something unsafe is refused.
    expect(modelFolderName("openai/gpt-4o")).toBe("openai__gpt-4o");
    expect(refusal(() => modelFolderName("x\\..", "configs/models/x.yaml: name")).message).toMatch(/^configs\/models\/x\.yaml: name: 'x\\\.\.' cannot be used/);
  });

  it("refuses two names that would share a folder, also when they differ only by case", () => {
    expect(() =>
      assertDistinctFolderNames([
        { name: "gpt-4o", source: "arm a" },
        { name: "gpt-4o-mini", source: "arm b" },
      ]),
    ).not.toThrow();
    expect(
      refusal(() =>
        assertDistinctFolderNames([
          { name: "GPT-4o", source: "arm a" },
          { name: "gpt-4o", source: "arm b" },
        ]),
      ).message,
    ).toBe("arm b and arm a give folder names that differ only by letter case ('GPT-4o', 'gpt-4o'): their results would overwrite each other");
  });
});

describe("model names on the command line", () => {
  let dir: string;
  let set: TaskSetFixture;
  const stderr: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-safe-names-"));
    set = await writeValidTaskSet(dir, { count: 2 });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterEach(() => {
    vi.restoreAllMocks();
    stderr.length = 0;
    process.exitCode = undefined;
  });

  async function iwr(...args: string[]): Promise<number> {
    vi.spyOn(console, "error").mockImplementation((...parts: unknown[]) => void stderr.push(parts.map(String).join(" ")));
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    return main(["node", "iwr", "--quiet", ...args]);
  }

  it("generate --model .. exits 2 before writing a result or a cache entry", async () => {
    const result = path.join(dir, "gen-results");
    const cache = path.join(dir, "gen-cache");
    const code = await iwr(
      "generate",
      "--data",
      set.jsonlPath,
      "--result",
      result,
      "--model",
      "..",
      "--cache-dir",
      cache,
      "--base-url",
      "http://127.0.0.1:9/v1",
    );
    expect(code).toBe(2);
    expect(stderr.join("\n")).toMatch(/--model: '\.\.' cannot be used as a folder name/);
    expect(fs.existsSync(result)).toBe(false);
    expect(fs.existsSync(cache)).toBe(false);
  });

  it("evaluate --model '' and --rescore --model ../x exit 2 and write nothing into the results folder", async () => {
    const result = path.join(dir, "eval-results");
    fs.mkdirSync(path.join(result, "1"), { recursive: true });
    expect(await iwr("evaluate", "--data", set.jsonlPath, "--result", result, "--model", "", "--judge", "heuristic", "--grounding", "heuristic")).toBe(2);
    expect(stderr.join("\n")).toMatch(/--model: '' cannot be used as a folder name: it is empty/);
    expect(await iwr("evaluate", "--rescore", "--result", result, "--model", "..\\x")).toBe(2);
    expect(fs.readdirSync(result)).toEqual(["1"]);
    expect(fs.readdirSync(path.join(result, "1"))).toEqual([]);
  });

  it("a preset whose name: is unsafe is refused with its file and line", async () => {
    const preset = path.join(dir, "bad-name.yaml");
    fs.writeFileSync(preset, "# a preset\nname: ..\nmaxTokens: 100\n");
    const result = path.join(dir, "preset-results");
    expect(await iwr("generate", "--data", set.jsonlPath, "--result", result, "--model", preset, "--base-url", "http://127.0.0.1:9/v1")).toBe(2);
    expect(stderr.join("\n")).toContain(`${preset}:2:7: name: '..' cannot name a result folder`);
    expect(fs.existsSync(result)).toBe(false);
  });
});
