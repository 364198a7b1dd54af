/**
 * The reconstruction graph's routing, fast: the real compiled graph (prepare, analyze,
 * draft, self-check, select, critique, revise) with scripted models injected into the model
 * layer and a scripted feedback provider in place of the self-check (its context part), so
 * no page is opened. What is checked is the graph's own logic: which draft is kept, what the
 * reviser starts from, why and when it stops, what critique and revise are given.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DraftFeedback, FeedbackProvider, FeedbackRequest } from "../../agents/reconstruct/feedback.ts";
import { runReconstructionAgent } from "../../agents/reconstruct/index.ts";
import { bestOf, stopReasonFor } from "../../agents/reconstruct/nodes/select.ts";
import type { AgentSettingsInput } from "../../agents/reconstruct/settings.ts";
import type { AgentValues, Draft } from "../../agents/reconstruct/state.ts";
import { createModelClient, ModelSpecSchema, NO_USAGE } from "../../src/models/index.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { CRITIQUE_REPLY, promptKind, storyboardReply } from "../support/agent-scripts.ts";
import { type ScriptedAnswer, ScriptedChatModel, type ScriptedQuestion } from "../support/scripted-chat-model.ts";

let task: Task;
let scratch: string;
let runs = 0;

beforeAll(async () => {
  task = (await loadTasks("tasks/iwr-mini.jsonl")).find((entry) => entry.id === 2)!;
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-agent-routing-"));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** A page the scripted drafter answers, named so that the scripted feedback can tell drafts apart. */
const page = (name: string) => `\`\`\`html\n<!doctype html><html><body><!-- page:${name} --><p>${name}</p></body></html>\n\`\`\``;
const nameOf = (html: string) => /<!-- page:([\w-]+) -->/.exec(html)?.[1] ?? "unknown";

interface Script {
  /** The first drafts' page. */
  first?: string;
  /** Each revision's page, in order (the last repeats). */
  revisions?: string[];
  critique?: string;
  /** Tokens each call reports. */
  tokensPerCall?: number;
}

function scriptedDrafter(script: Script): ScriptedChatModel {
  let revisions = 0;
  return new ScriptedChatModel((question: ScriptedQuestion): ScriptedAnswer => {
    const tokens = { inputTokens: script.tokensPerCall ?? 0, outputTokens: 0 };
    switch (promptKind(question.text)) {
      case "analyze":
        return { text: storyboardReply(task.line.action_sequence.map(replayActionOf)), ...tokens };
      case "critique":
        return { text: script.critique ?? CRITIQUE_REPLY, ...tokens };
      case "revise":
      case "revise-edits": {
        const list = script.revisions ?? ["revised"];
        return { text: page(list[Math.min(revisions++, list.length - 1)]!), ...tokens };
      }
      default:
        return { text: page(script.first ?? "first"), ...tokens };
    }
  });
}

/** Feedback by page name: its score, and two findings unless the page is named in `clean`. */
function scriptedFeedback(scores: Record<string, number>, clean: readonly string[] = []) {
  const requests: FeedbackRequest[] = [];
  const reference = path.join(scratch, "reference.png");
  const screenshot = path.join(scratch, "screenshot.png");
  // Any bytes do for the images the critic is shown: the scripted critic does not look.
  for (const file of [reference, screenshot]) fs.writeFileSync(file, Buffer.from("not looked at"));
  const provider: FeedbackProvider = async (request) => {
    requests.push(request);
    const name = nameOf(fs.readFileSync(path.join(request.draftDir, "index.html"), "utf8"));
    const feedback: DraftFeedback = {
      score: scores[name] ?? 0,
      findings: clean.includes(name)
        ? []
        : [
            { kind: "behaviour", cost: 0.2, step: 0, message: `${name}: the first action changed nothing` },
            { kind: "appearance", cost: 0.1, message: `${name}: the title is the wrong colour` },
          ],
      pairs: [{ reference, screenshot, caption: `after action 1 of ${name}` }],
    };
    return feedback;
  };
  return { provider, requests };
}

async function runAgent(settings: AgentSettingsInput, script: Script, feedback: FeedbackProvider, options: { pricing?: number } = {}) {
  const spec = ModelSpecSchema.parse({ name: "scripted-agent-model", pricing: { inputPerMillion: options.pricing ?? 0, outputPerMillion: 0 } });
  const model = scriptedDrafter(script);
  const client = createModelClient(spec, { chatModel: model });
  const workDir = path.join(scratch, `run-${runs++}`);
  const outcome = await runReconstructionAgent(
    task.inputs,
    { drafter: client, critic: client, workDir, feedback, statesCacheDir: path.join(scratch, "states") },
    { settings, ...(settings.trajectory === "given" ? { givenActions: task.line.action_sequence.map(replayActionOf) } : {}) },
  );
  const kinds = model.questions.map((question) => promptKind(question.text));
  const nameOfDraft = (id: number | undefined) => {
    const draft = outcome.state.drafts.find((entry) => entry.id === id);
    return draft?.page ? nameOf(fs.readFileSync(draft.page.path, "utf8")) : undefined;
  };
  return { state: outcome.state, finished: outcome.finished, questions: model.questions, kinds, nameOfDraft };
}

describe("the reconstruction graph keeps the best draft", () => {
  it("a better revision replaces the best, a worse one never does, and the next revision starts from the best", async () => {
    const { provider } = scriptedFeedback({ first: 0.5, better: 0.8, worse: 0.3 });
    const run = await runAgent({ maxIterations: 2, patience: 5 }, { revisions: ["better", "worse"] }, provider);
    expect(run.finished).toBe(true);
    expect(run.state.stopReason).toBe("max-iterations");
    expect(run.nameOfDraft(run.state.bestDraftId)).toBe("better");
    // Round 2 revised the best (better), not the latest (worse) nor the first.
    const revisePrompts = run.questions.filter((question) => promptKind(question.text) === "revise");
    expect(revisePrompts).toHaveLength(2);
    expect(revisePrompts[0]!.text).toContain("<!-- page:first -->");
    expect(revisePrompts[1]!.text).toContain("<!-- page:better -->");
    expect(run.state.drafts.map((draft) => [draft.round, run.nameOfDraft(draft.id), draft.selfScore])).toEqual([
      [0, "first", 0.5],
      [1, "better", 0.8],
      [2, "worse", 0.3],
    ]);
  });

  it("stops after `patience` rounds without a better score", async () => {
    const { provider } = scriptedFeedback({ first: 0.5, same: 0.5, lower: 0.4 });
    const run = await runAgent({ maxIterations: 10, patience: 2 }, { revisions: ["same", "lower", "lower"] }, provider);
    expect(run.state.stopReason).toBe("no-improvement");
    expect(run.state.round).toBe(2);
    expect(run.nameOfDraft(run.state.bestDraftId)).toBe("first");
  });

  it("stops at once when the best draft has no findings, without asking the critic", async () => {
    const { provider } = scriptedFeedback({ first: 0.9 }, ["first"]);
    const run = await runAgent({ maxIterations: 3 }, {}, provider);
    expect(run.state.stopReason).toBe("no-findings");
    expect(run.kinds).toEqual(["analyze", "draft"]);
  });
});

describe("the reconstruction graph's budgets", () => {
  it("stops on the token budget once the calls so far reach it", async () => {
    const { provider } = scriptedFeedback({ first: 0.5, revised: 0.6 });
    const run = await runAgent({ maxIterations: 5, budgetTokens: 1000 }, { tokensPerCall: 600 }, provider);
    expect(run.state.stopReason).toBe("token-budget");
    expect(run.kinds).toEqual(["analyze", "draft"]);
  });

  it("stops on the cost budget (the model's pricing)", async () => {
    const { provider } = scriptedFeedback({ first: 0.5, revised: 0.6 });
    // 600 tokens at $1000 a million: $0.60 a call.
    const run = await runAgent({ maxIterations: 5, budgetUsd: 1.5 }, { tokensPerCall: 600 }, provider, { pricing: 1000 });
    expect(run.state.stopReason).toBe("cost-budget");
    // analyze + draft = $1.20 goes on; + critique + revise = $2.40 stops.
    expect(run.kinds).toEqual(["analyze", "draft", "critique", "revise"]);
  });

  it("stops on the wall-time budget", async () => {
    const { provider } = scriptedFeedback({ first: 0.5 });
    const run = await runAgent({ maxIterations: 5, wallTimeSec: 0.001 }, {}, provider);
    expect(run.state.stopReason).toBe("wall-time");
    expect(run.state.round).toBe(0);
  });
});

describe("what critique and revise are given", () => {
  it("a critique that is not a defect list is recorded, and the revision works from the findings", async () => {
    const { provider } = scriptedFeedback({ first: 0.5, revised: 0.6 });
    const run = await runAgent({ maxIterations: 1 }, { critique: "I think it looks fine overall." }, provider);
    expect(run.kinds).toEqual(["analyze", "draft", "critique", "revise"]);
    expect(run.state.latestCritique?.error?.code).toBe("MODEL_REPLY");
    const critique = run.questions[2]!;
    expect(critique.images).toBe(2);
    const revise = run.questions[3]!.text;
    expect(revise).toContain("- behaviour, action 1: first: the first action changed nothing");
    expect(revise).toContain("- appearance: first: the title is the wrong colour");
  });

  it("a defect list from the critic comes first, the findings after it", async () => {
    const { provider } = scriptedFeedback({ first: 0.5, revised: 0.6 });
    const run = await runAgent({ maxIterations: 1 }, {}, provider);
    const revise = run.questions[3]!.text;
    expect(revise.indexOf("nothing reacts to a click")).toBeGreaterThanOrEqual(0);
    expect(revise.indexOf("nothing reacts to a click")).toBeLessThan(revise.indexOf("first: the first action changed nothing"));
  });

  it("without the critic (--no-critique) the reviser gets the best draft's findings as they are", async () => {
    const { provider } = scriptedFeedback({ first: 0.5, revised: 0.6 });
    const run = await runAgent({ maxIterations: 1, critique: false, analyze: false }, {}, provider);
    expect(run.kinds).toEqual(["generate", "revise"]);
    expect(run.questions[1]!.text).toContain("- behaviour, action 1: first: the first action changed nothing");
  });

  it("without replay (--no-replay) the feedback is asked with no actions; with it, with the run's actions", async () => {
    const off = scriptedFeedback({ first: 0.5 });
    await runAgent({ maxIterations: 0, trajectory: "given", replay: false }, {}, off.provider);
    expect(off.requests.map((request) => request.actions.length)).toEqual([0]);
    const on = scriptedFeedback({ first: 0.5 });
    await runAgent({ maxIterations: 0, trajectory: "given" }, {}, on.provider);
    expect(on.requests[0]!.actions.map((action) => action.description)).toEqual(task.line.action_sequence.map((action) => action.parameters.description));
    expect(on.requests[0]!.trajectory).toBe("given");
  });
});

describe("select's rules", () => {
  const draft = (id: number, selfScore: number | undefined, extra: Partial<Draft> = {}): Draft => ({
    id,
    round: 0,
    branch: 0,
    origin: "draft",
    requestHashes: [],
    usage: NO_USAGE,
    checked: true,
    page: { path: `/tmp/${id}.html`, sha256: "0".repeat(64) },
    ...(selfScore !== undefined ? { selfScore } : {}),
    ...extra,
  });

  it("bestOf: the highest score by at least the minimum step; ties keep the earlier; unchecked or pageless drafts never win", () => {
    expect(bestOf([draft(0, 0.5), draft(1, 0.7)], undefined)?.id).toBe(1);
    expect(bestOf([draft(1, 0.5)], draft(0, 0.5))?.id).toBe(0);
    expect(bestOf([draft(1, 0.5004)], draft(0, 0.5))?.id).toBe(0);
    expect(bestOf([draft(1, 0.9, { checked: false }), draft(2, 0.9, { page: undefined })], draft(0, 0.2))?.id).toBe(0);
    expect(bestOf([], undefined)).toBeUndefined();
  });

  it("stopReasonFor: no page first, then budgets, iterations, wall time, patience, findings, in that order", () => {
    const settings = { maxIterations: 3, patience: 2, budgetTokens: 100, budgetUsd: 1, wallTimeSec: 10 } as AgentValues["settings"];
    const state = (usage = NO_USAGE, startedAtMs = 0) => ({ settings, usageByNode: { draft: usage }, startedAtMs }) as unknown as AgentValues;
    const best = draft(0, 0.5, { findings: 0 });
    expect(stopReasonFor(state(), undefined, 0, 0, 0)).toBe("no-page");
    expect(stopReasonFor(state({ ...NO_USAGE, inputTokens: 100, costUsd: 5 }), best, 0, 0, 0)).toBe("token-budget");
    expect(stopReasonFor(state({ ...NO_USAGE, costUsd: 1 }), best, 3, 0, 0)).toBe("cost-budget");
    expect(stopReasonFor(state(), best, 3, 0, 100_000)).toBe("max-iterations");
    expect(stopReasonFor(state(), best, 1, 5, 10_000)).toBe("wall-time");
    expect(stopReasonFor(state(), best, 1, 2, 0)).toBe("no-improvement");
    expect(stopReasonFor(state(), best, 0, 2, 0)).toBe("no-findings");
    expect(stopReasonFor(state(), { ...best, findings: 1 }, 1, 1, 0)).toBeUndefined();
  });
});
