/**
 * Small bad inputs, each with a precise message: a log file that is a folder, a YAML
 * alias bomb, an id list with no id, and a model reply that quotes the API key (the key
 * must not reach the page written to disk).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { loadYamlConfig } from "../../src/config/load.ts";
import { loadModelSpec } from "../../src/models/index.ts";
import { loadActionScript } from "../../src/recorder/script-schema.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";
import { writeTimecodedTaskSet } from "../support/single-pass-videos.ts";

const KEY = "sk-bad-inputs-SECRET-0123456789";
let dir: string;
let jsonlPath: string;
let server: FakeOpenAIServer;
const stderr: string[] = [];
let savedKey: string | undefined;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bad-inputs-"));
  ({ jsonlPath } = await writeTimecodedTaskSet(dir, [2]));
  server = await startOpenAIServer({ models: ["gpt-4o"] });
  savedKey = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = KEY;
});
afterAll(async () => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  stderr.length = 0;
  process.exitCode = undefined;
});

const iwr = (...args: string[]): Promise<number> => runIwrCapturing(stderr, args, { quiet: false, stdout: false });

const BOMB = [
  "a: &a [x, x, x, x, x, x, x, x, x, x]",
  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
  "name: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
  "",
].join("\n");

describe("bad inputs", () => {
  it("--log-file naming a folder is a usage error, not silently ignored", async () => {
    expect(await iwr("--log-file", dir, "tasks", "validate", jsonlPath)).toBe(2);
    expect(stderr.join("\n")).toContain(`--log-file: ${dir} is a folder; give a file path such as ${dir}/run.jsonl`);
  });

  it("a YAML alias bomb is refused with the file's name, by every YAML reader", () => {
    const file = path.join(dir, "bomb.yaml");
    fs.writeFileSync(file, BOMB);
    const bomb = /bomb\.yaml: cannot read the YAML: Excessive alias count/;
    expect(() => loadModelSpec(file)).toThrow(bomb);
    expect(() => loadActionScript(file)).toThrow(bomb);
    expect(() => loadYamlConfig(file, z.object({ name: z.string() }))).toThrow(bomb);
  });

  it("an --ids list with no id in it is refused rather than read as every task", async () => {
    expect(await iwr("generate", "--data", jsonlPath, "--result", path.join(dir, "r"), "--model", "gpt-4o", "--ids", ",")).toBe(2);
    expect(stderr.join("\n")).toMatch(/argument ',' is invalid\. expected task ids like 1,2,7, got ',' \(no id in it\)/);
    expect(fs.existsSync(path.join(dir, "r"))).toBe(false);
  });

  it("a reply that quotes the API key is written to index.html with the key redacted", async () => {
    server.enqueue({ text: `\`\`\`html\n<html><body><p>my key is ${KEY}</p></body></html>\n\`\`\`` });
    const result = path.join(dir, "results");
    expect(await iwr("--quiet", "generate", "--data", jsonlPath, "--result", result, "--model", "gpt-4o", "--base-url", server.baseURL, "--cache", "off")).toBe(
      0,
    );
    const folder = path.join(result, "1", "gpt-4o");
    const page = fs.readFileSync(path.join(folder, "index.html"), "utf8");
    expect(page).toContain("my key is [REDACTED]");
    for (const name of fs.readdirSync(folder)) expect(fs.readFileSync(path.join(folder, name), "utf8")).not.toContain(KEY);
  });
});
