/**
 * Results are keyed by what they scored: evaluate → generate → evaluate rescores the
 * page that appeared; an unchanged page, task and evaluator is skipped; a regenerated
 * page, an edited checkpoint or another pairing mode is scored again. Real Chromium,
 * real OCR, the local OpenAI-compatible server for generation.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { main } from "../../src/cli/main.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { SHOPPING_LIST_TASK_OPTIONS, shoppingListPage, tempDir } from "../support/evaluator-replay-fixtures.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";
import { type TaskSetFixture, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const MODEL = "gpt-4o";
let dir: string;
let set: TaskSetFixture;
let server: FakeOpenAIServer;
const reply = shoppingListPage();
let savedKey: string | undefined;
const printed: string[] = [];

const resultDir = () => path.join(dir, "results");
const evalOf = (id: number) => readEvalRecord(path.join(resultDir(), String(id), MODEL, "eval.json"));

async function iwr(...args: string[]): Promise<number> {
  printed.length = 0;
  process.exitCode = undefined;
  const code = await main(["node", "iwr", "--quiet", ...args]);
  process.exitCode = undefined;
  return code;
}

const evaluate = (...extra: string[]) =>
  iwr(
    "evaluate",
    "--data",
    set.jsonlPath,
    "--result",
    resultDir(),
    "--model",
    MODEL,
    "--judge",
    "heuristic",
    "--grounding",
    "heuristic",
    "--visual-pairing",
    "aligned",
    "--no-trace",
    ...extra,
  );
const generate = (...extra: string[]) =>
  iwr(
    "generate",
    "--data",
    set.jsonlPath,
    "--result",
    resultDir(),
    "--model",
    MODEL,
    "--base-url",
    server.baseURL,
    "--cache-dir",
    path.join(dir, "cache"),
    ...extra,
  );

beforeAll(async () => {
  dir = tempDir("keyed");
  set = await writeValidTaskSet(dir, { count: 2, ...SHOPPING_LIST_TASK_OPTIONS });
  server = await startOpenAIServer({ models: [MODEL] });
  server.setReplyFunction(() => ({ text: `\`\`\`html\n${reply}\n\`\`\`` }));
  vi.spyOn(console, "log").mockImplementation((...parts: unknown[]) => void printed.push(parts.map(String).join(" ")));
  vi.spyOn(console, "error").mockImplementation((...parts: unknown[]) => void printed.push(parts.map(String).join(" ")));
  savedKey = process.env.OPENAI_API_KEY;
  // The local server takes any key; the model layer still wants one to send.
  process.env.OPENAI_API_KEY = "sk-keyed-results-test-000000";
});

afterAll(async () => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
  vi.restoreAllMocks();
  await server.close();
  await closeSharedBrowser();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("keyed results", () => {
  it("scores a missing page 0, then rescores the page that generation wrote", async () => {
    expect(await evaluate()).toBe(0);
    expect(evalOf(1).stopReason?.code).toBe("CANDIDATE_MISSING");
    expect(evalOf(1).inputs?.candidate).toBeNull();

    expect(await generate()).toBe(0);
    expect(await evaluate()).toBe(0);
    expect(printed.join("\n")).toMatch(/evaluated 2, skipped 0/);
    for (const id of [1, 2]) {
      expect(evalOf(id).stopReason).toBeUndefined();
      expect(evalOf(id).scores.ifs).toBe(1);
      expect(evalOf(id).inputs?.candidate).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("skips what is unchanged, without touching its files", async () => {
    const before = fs.statSync(path.join(resultDir(), "1", MODEL, "eval.json")).mtimeMs;
    expect(await evaluate()).toBe(0);
    expect(printed.join("\n")).toMatch(/evaluated 0, skipped 2/);
    expect(fs.statSync(path.join(resultDir(), "1", MODEL, "eval.json")).mtimeMs).toBe(before);
  });

  it("rescores a page regenerated with --force, and only that one", async () => {
    const scoredBefore = evalOf(1).inputs?.candidate;
    // Task 1's new page adds the wrong item; task 2 gets the very same page as before.
    let calls = 0;
    server.setReplyFunction(() => {
      calls += 1;
      const page = calls === 1 ? shoppingListPage().replace('addItem(input.value || "Untitled")', 'addItem("Apples")') : reply;
      return { text: `\`\`\`html\n${page}\n\`\`\`` };
    });
    expect(await generate("--force", "--cache", "off", "--workers", "1")).toBe(0);
    expect(await evaluate()).toBe(0);
    expect(printed.join("\n")).toMatch(/evaluated 1, skipped 1/);
    expect(evalOf(1).inputs?.candidate).not.toBe(scoredBefore);
    expect(evalOf(1).scores.ifs).toBeLessThan(1);
    expect(evalOf(2).scores.ifs).toBe(1);
  });

  it("scores a task again when one of its checkpoints changed, or under another pairing mode", async () => {
    const checkpoint = path.join(set.taskDir(2), "checkpoints", "step_1.png");
    await sharp({ create: { width: 640, height: 360, channels: 3, background: "#808080" } })
      .png()
      .toFile(`${checkpoint}.new.png`);
    fs.renameSync(`${checkpoint}.new.png`, checkpoint);
    expect(await evaluate()).toBe(0);
    expect(printed.join("\n")).toMatch(/evaluated 1, skipped 1/);

    // Task 1 is scored again; the report then refuses to average it with task 2's aligned result.
    expect(await evaluate("--visual-pairing", "official", "--ids", "1")).toBe(3);
    expect(evalOf(1).settings.pairingMode).toBe("official");
    expect(printed.join("\n")).toMatch(/refusing to average results produced under different judge settings/);
  });
});
