/**
 * Issue #14 §6 on real Chromium with model judges served by a local OpenAI-compatible
 * server: under official a judge that answers HTTP 500, or a reply with no verdict, is
 * recorded as "Error" and does not cut success_step (corrected turns it into No); the official prompts name no
 * action and do not say which image is the reference; `--prompts-dir` replaces a
 * template by name and its hash is recorded.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { closeSharedBrowser } from "../../src/browser/launch.ts";
import { readEvalRecord } from "../../src/evaluator/eval-record.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { type FakeOpenAIServer, messageParts, type RecordedRequest, startOpenAIServer } from "../support/openai-server.ts";
import { writeValidTaskSet } from "../support/tasks-fixtures.ts";

const CANDIDATE = "candidate-model";
let dir: string;
let jsonlPath: string;
let server: FakeOpenAIServer;
let judgeModelFile: string;

const PAGE = `<!doctype html><html><body style="margin:0;font:20px sans-serif">
<button class="btn" id="add">Add</button> <button class="btn" id="clear">Clear</button><ul id="list"></ul>
<script>
  document.getElementById("add").onclick = () => document.getElementById("list").insertAdjacentHTML("beforeend", "<li>row</li>");
  document.getElementById("clear").onclick = () => { document.getElementById("list").innerHTML = ""; };
</script></body></html>`;

const promptOf = (request: RecordedRequest) =>
  messageParts(request)
    .flatMap((part) => (part.type === "text" ? [String(part.text)] : []))
    .join("\n");

/** The index of the button a grounding prompt's description names, read off its element list. */
function indexFor(prompt: string): string {
  const wanted = /'(Add|Clear)'/.exec(prompt)?.[1]?.toLowerCase() ?? "";
  const line = prompt.split("\n").find((text) => text.includes(`id="${wanted}"`)) ?? "";
  return /^\[(\d+)\]/.exec(line)?.[1] ?? "-1";
}

/**
 * Grounding finds the button the description names — for 'Clear' it answers in prose
 * from the element list (the harness's parse sends that to the vision fallback) and in
 * digits from the screenshot; every assertion judgement fails with HTTP 500; the visual
 * judge scores 50.
 */
function reply(request: RecordedRequest) {
  const prompt = promptOf(request);
  if (prompt.includes("Find the page element"))
    return { text: prompt.includes("'Clear'") ? `The Clear button is element ${indexFor(prompt)}.` : indexFor(prompt) };
  if (prompt.includes("coloured box and a number drawn")) return { text: indexFor(prompt) };
  if (prompt.includes("Score how similar")) return { text: "Comments: close.\nScore: 50/100" };
  // The second assertion gets a reply with no verdict in it; the first an HTTP 500.
  if (prompt.includes("The list is empty")) return { text: "I cannot tell from these pictures." };
  return { status: 500, message: "the judge is down" };
}

const output: string[] = [];
const evaluate = (results: string, ...args: string[]) =>
  runIwrCapturing(output, [
    "evaluate",
    "--data",
    jsonlPath,
    "--result",
    results,
    "--model",
    CANDIDATE,
    "--judge",
    "llm",
    "--grounding",
    "llm",
    "--judge-model",
    judgeModelFile,
    "--no-trace",
    ...args,
  ]);

function writeCandidate(results: string): void {
  const folder = path.join(results, "1", CANDIDATE);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, "index.html"), PAGE);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-official-judge-"));
  const set = await writeValidTaskSet(dir, {
    name: "judged",
    actions: [
      { type: "Click", parameters: { description: "the 'Add' button" }, logical_assertion: "A new row appears in the list", visual_evaluation_flag: true },
      { type: "Click", parameters: { description: "the 'Clear' button" }, logical_assertion: "The list is empty", visual_evaluation_flag: true },
    ],
  });
  jsonlPath = set.jsonlPath;
  server = await startOpenAIServer({ models: ["judge-model"] });
  server.setReplyFunction(reply);
  // No retries at the HTTP level, so a 500 is final at once.
  judgeModelFile = path.join(dir, "judge-model.yaml");
  fs.writeFileSync(judgeModelFile, `name: judge-model\nbaseURL: ${server.baseURL}\napiKeyEnv: none\nmaxRetries: 0\n`);
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

afterAll(async () => {
  await server?.close();
  await closeSharedBrowser();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("model judges under the two profiles", () => {
  it("official: an HTTP 500 and an unreadable reply are each 'Error', asked once, and success_step is not cut", async () => {
    const results = path.join(dir, "official");
    writeCandidate(results);
    const before = server.chatRequests().length;
    expect(await evaluate(results, "--protocol", "official"), output.join("\n")).toBe(0);
    const record = readEvalRecord(path.join(results, "1", CANDIDATE, "eval.json"));
    expect(record.executedSteps).toBe(2);
    expect(record.assertions.map((entry) => entry.result)).toEqual(["Error", "Error"]);
    expect(record.successStep).toBe(2);
    expect(record.scores.ifs).toBe(1);
    expect(record.assertion_results?.map((entry) => entry?.result)).toEqual(["Error", "Error"]);
    // The visual judge's 50 on the harness's 0–1 scale, for the list [0, 0, 1] (state before each flagged action).
    expect(record.all_mllm_scores).toEqual([0.5, 0.5, 0.5]);
    expect(record.steps.map((step) => step.evalpoint)).toEqual([0, 0, 1]);

    const requests = server.chatRequests().slice(before).map(promptOf);
    const assertionPrompts = requests.filter((prompt) => prompt.includes("Statement:"));
    const assertionBodies = server
      .chatRequests()
      .slice(before)
      .filter((request) => promptOf(request).includes("Statement:"));
    expect(assertionBodies.map((request) => request.body?.max_tokens ?? request.body?.max_completion_tokens)).toEqual([4096, 4096]);
    // Asked once per assertion; the prompt names the assertion and not the action.
    expect(assertionPrompts).toHaveLength(2);
    expect(assertionPrompts.join("\n")).toContain("A new row appears in the list");
    expect(assertionPrompts.join("\n")).not.toContain("'Add' button");
    const visualPrompt = requests.find((prompt) => prompt.includes("Score how similar")) ?? "";
    expect(visualPrompt).not.toMatch(/reference/i);
    // A prose grounding reply went to the vision fallback, which is sent without a temperature.
    const grounding = server
      .chatRequests()
      .slice(before)
      .filter((request) => /Find the page element|coloured box and a number drawn/.test(promptOf(request)));
    const vision = grounding.filter((request) => promptOf(request).includes("coloured box and a number drawn"));
    expect(vision).toHaveLength(1);
    expect(vision[0]?.body && "temperature" in vision[0].body).toBe(false);
    expect(grounding.filter((request) => !vision.includes(request)).every((request) => request.body?.temperature === 0)).toBe(true);
    const replay = JSON.parse(fs.readFileSync(path.join(results, "1", CANDIDATE, "replay.json"), "utf8")) as {
      steps: Array<{ grounding?: { method: string } }>;
    };
    expect(replay.steps.map((step) => step.grounding?.method)).toEqual(["text", "vision"]);
  }, 120_000);

  it("corrected: the same failing judge counts as No, after its retries, and cuts success_step at the first assertion", async () => {
    const results = path.join(dir, "corrected");
    writeCandidate(results);
    const before = server.chatRequests().length;
    expect(await evaluate(results, "--protocol", "corrected"), output.join("\n")).toBe(0);
    const record = readEvalRecord(path.join(results, "1", CANDIDATE, "eval.json"));
    expect(record.executedSteps).toBe(2);
    expect(record.assertions.map((entry) => entry.result)).toEqual(["No", "No"]);
    expect(record.successStep).toBe(0);
    // Each asked three times (a retry after an unreadable reply adds a reminder after the question, so read the first message).
    const firstMessage = (request: RecordedRequest) =>
      messageParts(request, 0)
        .flatMap((part) => (part.type === "text" ? [String(part.text)] : []))
        .join("\n");
    const assertionPrompts = server
      .chatRequests()
      .slice(before)
      .map(firstMessage)
      .filter((prompt) => prompt.includes("The statement to check"));
    expect(assertionPrompts).toHaveLength(6);
    expect(assertionPrompts[0]).toContain("'Add' button");
  }, 120_000);

  it("--prompts-dir replaces a template by name, and the record carries its hash", async () => {
    const results = path.join(dir, "override");
    writeCandidate(results);
    const prompts = path.join(dir, "harness-prompts");
    fs.mkdirSync(prompts);
    fs.writeFileSync(
      path.join(prompts, "judge-assertion-official.md"),
      "---\nname: judge-assertion-official\nvariables: [assertion]\n---\nLOCAL COPY. Statement: {{assertion}}\nReturn JSON.\n",
    );
    const before = server.chatRequests().length;
    expect(await evaluate(results, "--protocol", "official", "--prompts-dir", prompts), output.join("\n")).toBe(0);
    expect(
      server
        .chatRequests()
        .slice(before)
        .map(promptOf)
        .filter((prompt) => prompt.startsWith("LOCAL COPY.")),
    ).toHaveLength(2);
    const official = readEvalRecord(path.join(dir, "official", "1", CANDIDATE, "eval.json"));
    const overridden = readEvalRecord(path.join(results, "1", CANDIDATE, "eval.json"));
    expect(overridden.settings.promptHashes["judge-assertion-official"]).toMatch(/^[0-9a-f]{64}$/);
    expect(overridden.settings.promptHashes["judge-assertion-official"]).not.toBe(official.settings.promptHashes["judge-assertion-official"]);
    // Templates the folder does not hold stay ours.
    expect(overridden.settings.promptHashes["ground-element"]).toBe(official.settings.promptHashes["ground-element"]);
  }, 120_000);
});
