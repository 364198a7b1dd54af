/**
 * The experiment's parts that need no browser: asset links of pages made elsewhere,
 * the bootstrap interval, repeats as new samples, and the config's cross-key checks.
 */
import fs from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { AssertionJudge, TruthStep } from "../../src/evaluator/judge/types.ts";
import { AssertionQueue } from "../../src/evaluator/judge-queue.ts";
import { rebaseAssetLinks } from "../../src/experiment/arms.ts";
import { loadExperimentConfig } from "../../src/experiment/config.ts";
import { forRepeat, type ModelClient } from "../../src/models/index.ts";
import type { InvokeOptions } from "../../src/models/types.ts";
import { iterationCurve } from "../../src/report/agent-report-parts.ts";
import { bootstrapMeanInterval } from "../../src/report/statistics.ts";
import type { Action } from "../../src/tasks/schema.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";

const dir = tempDir("experiment-parts");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("rebaseAssetLinks", () => {
  it("points relative links to the task's asset files at the new base and leaves every other URL alone", () => {
    const html = [
      `<img src="../../../data/3/assets/logo.png">`,
      `<img src='assets/photo one.jpg'>`,
      `<div style="background:url(../x/assets/bg.webp)"></div>`,
      `<img src="https://cdn.example/logo.png">`,
      `<img src="/abs/logo.png">`,
      `<img src="data:image/png;base64,AAAA">`,
      `<a href="../other/notes.txt">`,
      `<img src="../assets/logo.png?v=2">`,
    ].join("\n");
    const { html: out, rewritten } = rebaseAssetLinks(html, ["logo.png", "photo one.jpg", "bg.webp"], "../../../../tasks/t/3/assets");
    expect(rewritten).toBe(4);
    expect(out).toContain(`src="../../../../tasks/t/3/assets/logo.png"`);
    expect(out).toContain(`src='../../../../tasks/t/3/assets/photo one.jpg'`);
    expect(out).toContain(`url(../../../../tasks/t/3/assets/bg.webp)`);
    expect(out).toContain(`src="../../../../tasks/t/3/assets/logo.png?v=2"`);
    expect(out).toContain(`src="https://cdn.example/logo.png"`);
    expect(out).toContain(`src="/abs/logo.png"`);
    expect(out).toContain(`href="../other/notes.txt"`);
  });
});

describe("bootstrapMeanInterval", () => {
  it("brackets the mean, is reproducible, narrows with more tasks, and is a point for constant differences", () => {
    const values = [0.1, -0.05, 0.2, 0.15, 0.0, 0.3, 0.05, 0.12];
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const [low, high] = bootstrapMeanInterval(values, 5000);
    expect(low).toBeLessThan(mean);
    expect(high).toBeGreaterThan(mean);
    expect(bootstrapMeanInterval(values, 5000)).toEqual([low, high]);
    const [wideLow, wideHigh] = bootstrapMeanInterval(values.slice(0, 3), 5000);
    const [narrowLow, narrowHigh] = bootstrapMeanInterval([...values, ...values, ...values, ...values], 5000);
    expect(narrowHigh - narrowLow).toBeLessThan(wideHigh - wideLow);
    expect(bootstrapMeanInterval([0.25, 0.25, 0.25], 1000)).toEqual([0.25, 0.25]);
  });
});

describe("forRepeat", () => {
  it("marks every request of repeat r as its own sample, keeping breadth samples apart, and leaves repeat 0 as it was", async () => {
    const seen: Array<number | undefined> = [];
    const client: ModelClient = {
      spec: { name: "m" } as ModelClient["spec"],
      invoke: async (_messages, options?: InvokeOptions) => {
        seen.push(options?.sample);
        return { text: "", usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0, latencyMs: 0, cacheHit: false, requestHash: "" };
      },
    };
    const message = [new HumanMessage("hi")];
    expect(forRepeat(client, 0)).toBe(client);
    await forRepeat(client, 2).invoke(message);
    await forRepeat(client, 2).invoke(message, { sample: 1 });
    await forRepeat(client, 1).invoke(message);
    expect(seen).toEqual([2000, 2001, 1000]);
  });
});

describe("experiment config", () => {
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const base = "tasks:\n  file: tasks.jsonl\n";
  it("resolves paths against the config's folder and fills the profile's evaluator choices", () => {
    const config = loadExperimentConfig(
      write(
        "ok.yaml",
        `${base}evaluator:\n  protocol: official\n  judges: model\n  pairing: aligned\n` +
          "arms:\n  - name: r\n    kind: reference\n  - name: mine\n    kind: module:gen.ts\n",
      ),
    );
    expect(config.taskFile).toBe(path.join(dir, "tasks.jsonl"));
    expect(config.out).toBe(path.resolve("runs", "ok"));
    expect(config.evaluator).toMatchObject({ protocol: "official", judge: "llm", grounding: "llm", pairing: "aligned" });
    // Without an override, the protocol sets the pairing.
    const plain = loadExperimentConfig(write("plain.yaml", `${base}evaluator:\n  protocol: official\narms:\n  - name: r\n    kind: reference\n`));
    expect(plain.evaluator).toMatchObject({ protocol: "official", judges: "offline", judge: "heuristic", pairing: "official" });
    expect(loadExperimentConfig(write("default.yaml", `${base}arms:\n  - name: r\n    kind: reference\n`)).evaluator).toMatchObject({
      protocol: "corrected",
      pairing: "aligned",
    });
    // The key this replaced says what became of it.
    expect(() => loadExperimentConfig(write("old.yaml", `${base}evaluator:\n  profile: offline\narms:\n  - name: r\n    kind: reference\n`))).toThrow(
      /old\.yaml:\d+:\d+: evaluator\.profile: was split in two: `judges: offline \| model`/,
    );
    expect(config.arms[1]!.parsed).toEqual({ type: "module", file: path.join(dir, "gen.ts") });
    // The scoring stage is as wide as the generating one unless the config says otherwise.
    expect([config.concurrency, config.evaluatorWorkers]).toEqual([1, 1]);
    const three = loadExperimentConfig(write("three.yaml", `${base}concurrency: 3\narms:\n  - name: r\n    kind: reference\n`));
    expect([three.concurrency, three.evaluatorWorkers]).toEqual([3, 3]);
    const wide = loadExperimentConfig(write("wide.yaml", `${base}concurrency: 2\nevaluatorWorkers: 5\narms:\n  - name: r\n    kind: reference\n`));
    expect([wide.concurrency, wide.evaluatorWorkers]).toEqual([2, 5]);
    expect(() => loadExperimentConfig(write("zero.yaml", `${base}evaluatorWorkers: 0\narms:\n  - name: r\n    kind: reference\n`))).toThrow(
      /zero\.yaml:3:\d+: evaluatorWorkers: /,
    );
  });
  it("lists every cross-key problem at once, each with its line and key", () => {
    const file = write(
      "bad.yaml",
      `${base}report:\n  compare: [a, nobody]\n` +
        "arms:\n  - name: a\n    kind: blank\n    model: gpt-4o\n  - name: A\n    kind: agent\n  - name: m\n    kind: mutant:freeze-after\n",
    );
    let message = "";
    try {
      loadExperimentConfig(file);
    } catch (error) {
      message = String(error);
    }
    expect(message).toMatch(/bad\.yaml:\d+:\d+: arms\[2\]\.kind: mutant operator 'freeze-after': freeze-after needs a gesture count/);
    const second = write(
      "bad2.yaml",
      `${base}report:\n  compare: [a, nobody]\narms:\n  - name: a\n    kind: blank\n    model: gpt-4o\n  - name: A\n    kind: agent\n`,
    );
    try {
      loadExperimentConfig(second);
    } catch (error) {
      message = String(error);
    }
    expect(message).toMatch(/bad2\.yaml:8:\d+: arms\[0\]\.model: a blank arm takes no model/);
    expect(message).toMatch(/bad2\.yaml:9:\d+: arms\[1\]\.name: 'A' is also arm 0's name/);
    expect(message).toMatch(/bad2\.yaml:\d+:\d+: arms\[1\]: an agent arm needs a model/);
    expect(message).toMatch(/bad2\.yaml:4:\d+: report\.compare\[1\]: no arm is named 'nobody'/);
  });
});

describe("judge repeats", () => {
  it("judge each assertion k times as separate samples, score the first, and keep every result", async () => {
    const samples: Array<number | undefined> = [];
    const judge: AssertionJudge = {
      kind: "llm",
      promptHashes: {},
      judge: async (input) => {
        samples.push(input.sample);
        return { result: input.sample === 1 ? "No" : "Yes", replies: [], attempts: 1, latencyMs: 0 };
      },
    };
    const action = { type: "Click", parameters: { description: "the button" }, logical_assertion: "the panel opens", visual_evaluation_flag: true } as Action;
    const queue = new AssertionQueue(judge, [action], 3);
    queue.onEvalpoint(0, Buffer.from("before"));
    queue.onEvalpoint(1, Buffer.from("after"));
    const [outcome] = await queue.settled();
    expect(samples).toEqual([undefined, 1, 2]);
    expect(outcome).toMatchObject({ actionIndex: 0, verdict: { result: "Yes" }, repeats: ["Yes", "No", "Yes"] });
    const single = new AssertionQueue(judge, [action]);
    single.onEvalpoint(0, Buffer.from("before"));
    single.onEvalpoint(1, Buffer.from("after"));
    expect((await single.settled())[0]!.repeats).toBeUndefined();
  });
});

describe("the judge's early look at the true page", () => {
  it("hands the judge every judged step's true states before any evalpoint, leaving out unjudged steps and unreadable states", async () => {
    const states = ["s0", "s1", "s2", "s3"].map((name) => {
      const file = path.join(dir, `truth-${name}.png`);
      fs.writeFileSync(file, name);
      return file;
    });
    // Step 2's state after it (index 3) is gone: that step is judged later and its judgement says why.
    fs.rmSync(states[3]!);
    const prepared: TruthStep[][] = [];
    let judged = 0;
    const stops: AbortSignal[] = [];
    let finishReadings!: () => void;
    const readings = new Promise<void>((resolve) => {
      finishReadings = resolve;
    });
    const judge: AssertionJudge = {
      kind: "heuristic",
      promptHashes: {},
      prepare: async (steps, stop) => {
        prepared.push([...steps]);
        stops.push(stop);
        await readings;
      },
      judge: async () => {
        judged += 1;
        return { result: "Yes", replies: [], attempts: 1, latencyMs: 0 };
      },
    };
    const act = (assertion: string) =>
      ({ type: "Click", parameters: { description: "a button" }, logical_assertion: assertion, visual_evaluation_flag: true }) as Action;
    const queue = new AssertionQueue(judge, [act("the menu opens"), act(""), act("the total reads 9")], 1, "skipped", states);
    queue.prepareJudge();
    await vi.waitFor(() => expect(prepared).toHaveLength(1));
    expect(judged).toBe(0);
    expect(prepared[0]!.map((step) => ({ assertion: step.assertion, before: String(step.truth.before), after: String(step.truth.after) }))).toEqual([
      { assertion: "the menu opens", before: "s0", after: "s1" },
    ]);
    // Asking for the verdicts (the replay is over) tells the judge to start no further step,
    // and they wait for the readings already started: none outlives the task's evaluation.
    expect(stops[0]!.aborted).toBe(false);
    let settled = false;
    const verdicts = queue.settled().then(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    expect(stops[0]!.aborted).toBe(true);
    finishReadings();
    await verdicts;
    // Without the true states (a task that has none) there is nothing to hand over.
    const bare = new AssertionQueue(judge, [act("the menu opens")]);
    bare.prepareJudge();
    await bare.settled();
    expect(prepared).toHaveLength(1);
  });
});

describe("score-by-iteration curve", () => {
  const draft = (round: number, selfScore: number, final: number) => ({ draft: round, round, selfScore, final });
  it("takes the best draft so far by self-score per cell, averages a task's repeats first, then the tasks", () => {
    const records = [
      // Task 1, two repeats: round 1 improves one of them.
      { arm: "agent", taskId: 1, repeat: 0, iterations: [draft(0, 0.2, 0.1), draft(1, 0.6, 0.5)] },
      { arm: "agent", taskId: 1, repeat: 1, iterations: [draft(0, 0.4, 0.3), draft(1, 0.1, 0.9)] },
      // Task 2, one repeat.
      { arm: "agent", taskId: 2, repeat: 0, iterations: [draft(0, 0.5, 0.7)] },
      { arm: "single", taskId: 1, repeat: 0, iterations: [] },
    ];
    const curve = iterationCurve("agent", records)!;
    // Round 0: task 1 (0.1 + 0.3) / 2 = 0.2, task 2 0.7 → 0.45. Per cell it would be (0.1 + 0.3 + 0.7) / 3.
    expect(curve.rounds[0]?.final).toBeCloseTo(0.45, 12);
    expect(curve.rounds[0]?.tasks).toBe(2);
    // Round 1: repeat 0 moves to 0.5; repeat 1 keeps 0.3 (its round-1 draft self-scored lower: never a regression) → task 1 0.4, task 2 0.7.
    expect(curve.rounds[1]?.final).toBeCloseTo(0.55, 12);
    expect(curve.rounds[1]?.selfScore).toBeCloseTo(((0.6 + 0.4) / 2 + 0.5) / 2, 12);
    expect(curve.points).toHaveLength(5);
    expect(iterationCurve("single", records)).toBeUndefined();
  });
});
