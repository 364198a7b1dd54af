/**
 * Issue #14's end-to-end check: a task file shaped exactly like the real dataset's
 * declared features (a Type action without `text`, flags missing, a null assertion, a
 * line without classification, another without a resolution) validates with warnings,
 * generates against a local OpenAI-compatible server, and evaluates on real Chromium
 * under both protocol profiles.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import type { GenerationRecord } from "../../src/run/generate.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { type FakeOpenAIServer, messageParts, type RecordedRequest, startOpenAIServer } from "../support/openai-server.ts";
import { writeJsonl, writeValidTaskSet } from "../support/tasks-fixtures.ts";

const API_KEY = "sk-test-dataset-lines-0123456789";
const MODEL = "fake-model";
let dir: string;
let jsonlPath: string;
let server: FakeOpenAIServer;
let savedKey: string | undefined;

/** A page the trajectory can be replayed on: an Add button that adds a row, a search box, a long page, a footer. */
const PAGE = `<!doctype html><html><body style="margin:0;font:20px sans-serif">
<button class="btn" id="add" style="font-size:20px">Add</button>
<input id="search" placeholder="Search" style="font-size:20px">
<ul id="list"></ul><div style="height:1200px"></div><footer>The footer</footer>
<script>document.getElementById("add").onclick = () => { document.getElementById("list").insertAdjacentHTML("beforeend", "<li>row</li>"); };</script>
</body></html>`;

/** Task 1 gets the page in a fenced block; task 2 gets prose (the harness still writes it). */
function replyFor(request: RecordedRequest) {
  const prompt = messageParts(request)
    .flatMap((part) => (part.type === "text" ? [String(part.text)] : []))
    .join("\n");
  if (prompt.includes("1920")) return { text: "I am sorry, I cannot rebuild this page." };
  return { text: `Here it is:\n\`\`\`html\n${PAGE}\n\`\`\`` };
}

const output: string[] = [];
const iwr = (...args: string[]) => runIwrCapturing(output, args);
const results = (profile: string) => path.join(dir, `results-${profile}`);
const candidate = (profile: string, id: number) => path.join(results(profile), String(id), MODEL);
const generation = (profile: string, id: number): GenerationRecord =>
  JSON.parse(fs.readFileSync(path.join(candidate(profile, id), "generation.json"), "utf8")) as GenerationRecord;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-dataset-lines-"));
  // 2.5 s videos: the harness's int(duration) sends 2 frames, corrected's ceiling 3.
  const set = await writeValidTaskSet(dir, { count: 2, name: "dataset", videoSeconds: 2.5 });
  jsonlPath = set.jsonlPath;
  const [first, second] = set.lines.map((line) => structuredClone(line));
  const shaped = [first!, second!].map((line) => {
    const [click, type, scroll, press] = line.action_sequence;
    // The dataset's declared features: no parameters.text (the text is in the description), flags only where set.
    const { visual_evaluation_flag: _typeFlag, ...typeWithoutFlag } = type!;
    const { visual_evaluation_flag: _pressFlag, ...pressWithoutFlag } = press!;
    return {
      ...line,
      action_sequence: [
        click,
        { ...typeWithoutFlag, parameters: { description: "type 'milk' into the search box at the top" } },
        scroll,
        { ...pressWithoutFlag, logical_assertion: null },
      ],
    };
  });
  const { classification: _dropped, ...withoutClassification } = shaped[1]!;
  // Task 2 also lacks its resolution: the official profile falls back to 1920x1080, as the harness does.
  await writeJsonl(jsonlPath, [shaped[0], { ...withoutClassification, recording_details: { environment: "dataset fixture" } }]);
  server = await startOpenAIServer({ requireApiKey: API_KEY, models: [MODEL] });
  server.setReplyFunction(replyFor);
  savedKey = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = API_KEY;
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

afterAll(async () => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
  await server?.close();
  await closeSharedBrowser();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the real dataset's task lines", () => {
  it("validate with warnings listed apart from errors; without a resolution a line is a problem under corrected", async () => {
    output.length = 0;
    expect(await iwr("tasks", "validate", jsonlPath, "--no-media")).toBe(0);
    const text = output.join("\n");
    expect(text).toMatch(/2 tasks OK \(\d+ warnings\)/);
    expect(text).toContain("action_sequence[1].parameters.text: missing: the text to type is read from the description");
    expect(text).toContain("action_sequence[1].visual_evaluation_flag: missing: read as false, as the harness does");
    expect(text).toContain("action_sequence[3].logical_assertion: null: no assertion is judged for this action");
    expect(text).toMatch(/:2: classification: missing/);
    expect(text).toMatch(/recording_details\.resolution: missing and no .*metadata\.json; using 1920x1080, as the harness does/);

    output.length = 0;
    expect(await iwr("tasks", "validate", jsonlPath, "--no-media", "--protocol", "corrected")).toBe(1);
    expect(output.join("\n")).toMatch(/:2: recording_details\.resolution: missing \(the official profile falls back/);
  });

  it("generate under official as the harness does: int(duration) JPEG frames, the harness's limits, every reply written", async () => {
    expect(await iwr("generate", "--data", jsonlPath, "--result", results("official"), "--model", MODEL, "--base-url", server.baseURL, "--cache", "off")).toBe(
      0,
    );
    const requests = server.chatRequests();
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      const urls = messageParts(request).flatMap((part) => (part.type === "image_url" ? [(part as { image_url: { url: string } }).image_url.url] : []));
      // One sheet (PNG), then int(2.5) = 2 frames as JPEG.
      expect(urls.map((url) => url.slice(0, 15))).toEqual(["data:image/png;", "data:image/jpeg", "data:image/jpeg"]);
      // A name the harness's table does not know gets its default: 16384 tokens.
      expect(request.body?.max_tokens ?? request.body?.max_completion_tokens).toBe(16_384);
    }
    expect(generation("official", 1)).toMatchObject({ status: "generated", protocol: "official", images: { frames: 2 } });
    expect(fs.readFileSync(path.join(candidate("official", 1), "index.html"), "utf8")).toContain('<button class="btn" id="add"');
    // The prose reply is the page, as the harness writes it.
    expect(generation("official", 2)).toMatchObject({ status: "generated", protocol: "official" });
    expect(fs.readFileSync(path.join(candidate("official", 2), "index.html"), "utf8")).toBe("I am sorry, I cannot rebuild this page.");
  });

  it("generate under corrected: the ceiling's 3 PNG frames, and a line without a resolution is refused", async () => {
    output.length = 0;
    // Task 2 has no resolution, which corrected refuses: generate task 1 from a copy of the file without it.
    const oneLine = path.join(dir, "dataset-task1.jsonl");
    fs.writeFileSync(oneLine, `${fs.readFileSync(jsonlPath, "utf8").split("\n")[0]}\n`);
    fs.cpSync(path.join(dir, "dataset"), path.join(dir, "dataset-task1"), { recursive: true });
    expect(
      await iwr(
        "generate",
        "--data",
        oneLine,
        "--result",
        results("corrected"),
        "--model",
        MODEL,
        "--base-url",
        server.baseURL,
        "--cache",
        "off",
        "--protocol",
        "corrected",
      ),
    ).toBe(0);
    const last = server.chatRequests().at(-1)!;
    const urls = messageParts(last).flatMap((part) => (part.type === "image_url" ? [(part as { image_url: { url: string } }).image_url.url] : []));
    expect(urls.map((url) => url.slice(0, 15))).toEqual(["data:image/png;", "data:image/png;", "data:image/png;", "data:image/png;"]);
    expect(generation("corrected", 1)).toMatchObject({ status: "generated", protocol: "corrected", images: { frames: 3 } });
    // The whole file under corrected stops at the missing resolution, naming it.
    output.length = 0;
    expect(
      await iwr("generate", "--data", jsonlPath, "--result", results("refused"), "--model", MODEL, "--base-url", server.baseURL, "--protocol", "corrected"),
    ).not.toBe(0);
    expect(output.join("\n")).toMatch(/dataset\.jsonl:2: recording_details\.resolution: missing/);
    expect(fs.existsSync(results("refused"))).toBe(false);
  });

  it("official: sheets alone over the cap are all sent without frames, and an empty reply is written as the page", async () => {
    // A name with "qwen" in it gets the harness's 20-image cap; this task has 21 sheets.
    const crowded = await writeValidTaskSet(path.join(dir, "crowded"), { name: "crowded", sheetCount: 21, videoSeconds: 2.5 });
    server.setReplyFunction(() => ({ empty: true }));
    try {
      const before = server.chatRequests().length;
      const results = path.join(dir, "results-crowded");
      expect(
        await iwr("generate", "--data", crowded.jsonlPath, "--result", results, "--model", "fake-qwen-vl", "--base-url", server.baseURL, "--cache", "off"),
        output.join("\n"),
      ).toBe(0);
      const [request] = server.chatRequests().slice(before);
      const urls = messageParts(request!).flatMap((part) => (part.type === "image_url" ? [(part as { image_url: { url: string } }).image_url.url] : []));
      expect(urls).toHaveLength(21);
      expect(urls.every((url) => url.startsWith("data:image/png;"))).toBe(true);
      expect(request!.body?.max_tokens ?? request!.body?.max_completion_tokens).toBe(4096);
      const folder = path.join(results, "1", "fake-qwen-vl");
      expect(JSON.parse(fs.readFileSync(path.join(folder, "generation.json"), "utf8"))).toMatchObject({
        status: "generated",
        protocol: "official",
        images: { sheets: 21, frames: 0 },
      });
      expect(fs.readFileSync(path.join(folder, "index.html"), "utf8")).toBe("");
    } finally {
      server.setReplyFunction(replyFor);
    }
  });

  it("evaluates on real Chromium under both profiles, each record and report naming its profile", async () => {
    for (const profile of ["official", "corrected"] as const) {
      const data = profile === "official" ? jsonlPath : path.join(dir, "dataset-task1.jsonl");
      output.length = 0;
      const code = await iwr(
        "evaluate",
        "--data",
        data,
        "--result",
        results(profile),
        "--model",
        MODEL,
        "--judge",
        "heuristic",
        "--grounding",
        "heuristic",
        "--no-trace",
        "--protocol",
        profile,
      );
      expect(code, output.join("\n")).toBe(0);
      const record = readEvalRecord(path.join(candidate(profile, 1), "eval.json"));
      expect(record.settings).toMatchObject({ protocol: profile, pairingMode: profile === "official" ? "official" : "aligned" });
      // Every action executed on the reconstructed page; the Type step typed the text its description quotes.
      expect(record.executedSteps).toBe(4);
      const replay = JSON.parse(fs.readFileSync(path.join(candidate(profile, 1), "replay.json"), "utf8")) as { steps: Array<{ typedText?: string }> };
      expect(replay.steps[1]?.typedText).toBe("milk");
      // The harness's keys beside ours; the null assertion was not judged.
      expect(record.total_step).toBe(4);
      expect(record.assertion_results?.[3]).toBeNull();
      expect(record.assertion_results?.[1]).toBeNull();
      expect(record.all_mllm_scores?.every((score) => score >= 0 && score <= 1)).toBe(true);
    }
    const official = fs.readFileSync(path.join(results("official"), "reports", `${MODEL}_metrics.md`), "utf8");
    expect(official.split("\n")[0]).toBe(`# model: ${MODEL} result`);
    expect(official).toContain("Protocol profile: official.");
    // The prose page of task 2 was evaluated too (it has an index.html): both tasks are averaged.
    expect(official).toContain("Tasks: 2 (2 with an index.html)");
    const corrected = fs.readFileSync(path.join(results("corrected"), "reports", `${MODEL}_metrics.md`), "utf8");
    expect(corrected.split("\n")[0]).toBe(`# ${MODEL} metrics`);
    expect(corrected).toContain("Protocol profile: corrected.");
  });
});
