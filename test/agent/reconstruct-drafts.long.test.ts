/**
 * The reconstruction agent end to end (drafts kept and refused): the real graph, real Chromium self-checks,
 * and a local OpenAI-compatible server on 127.0.0.1 answering from a script (a fixture: the
 * scripted answers are chosen here). Requests are counted at the server. The shared setup
 * is test/support/agent-fixture.ts.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { referencePageHtml } from "../../src/calibration/calibration.ts";
import { agentDirFor } from "../../src/results/layout.ts";
import { runAgentRun } from "../../src/run/agent.ts";
import { runGeneration } from "../../src/run/generate.ts";
import { AGENT_TEST_MS, dir, finalScore, kinds, pageOf, recordOf, server, spec, storyboard, TASK_ID, task, useAgentFixture } from "../support/agent-fixture.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, scriptlessPageReply, truePageReply } from "../support/agent-scripts.ts";
import { messageParts } from "../support/openai-server.ts";

useAgentFixture();

describe("the agent keeps the best draft", () => {
  it(
    "keeps an improvement, and the evaluator scores it above the same model's single pass",
    async () => {
      const model = scriptedAgentModel({
        generate: [scriptlessPageReply(task)],
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "improve");
      const [result] = await runAgentRun({ tasks: [task], resultDir, drafter: spec(), settings: { maxIterations: 1 }, cacheMode: "off" });
      expect(result).toMatchObject({ status: "finished", stopReason: "max-iterations" });
      expect(kinds()).toEqual(["analyze", "draft", "critique", "revise"]);
      const record = recordOf(resultDir);
      expect(record.drafts.map((draft: { origin: string; parent?: number }) => [draft.origin, draft.parent])).toEqual([
        ["draft", undefined],
        ["revise", 0],
      ]);
      expect(record.bestDraft).toBe(1);
      expect(record.drafts[1].selfScore).toBeGreaterThan(record.drafts[0].selfScore + 0.3);
      expect(record.selfScoreByRound).toEqual([record.drafts[0].selfScore, record.drafts[1].selfScore]);
      expect(pageOf(resultDir)).toContain("<script");
      // The critique saw the worst pairs only: far fewer images than the video's frames.
      const [, draftRequest, critiqueRequest, reviseRequest] = server.chatRequests();
      const images = (request: typeof draftRequest) => messageParts(request!).filter((part) => part.type === "image_url").length;
      expect(images(critiqueRequest) + images(reviseRequest)).toBeLessThanOrEqual(images(draftRequest) / 2);
      expect(record.usageByNode.critique.images).toBe(images(critiqueRequest));
      expect(record.checkpoint.largestBytes).toBeLessThan(64 * 1024);

      await runGeneration({ tasks: [task.inputs], resultDir, spec: spec(), cacheMode: "off" });
      const [singlePass, agent] = [await finalScore(resultDir, "gpt-4o"), await finalScore(resultDir, "gpt-4o@agent")];
      expect(agent).toBeGreaterThan(singlePass + 0.2);
    },
    AGENT_TEST_MS,
  );

  it(
    "refuses a regression: a full first draft and a broken revision leave the first draft",
    async () => {
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [truePageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [scriptlessPageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "regress");
      const [result] = await runAgentRun({ tasks: [task], resultDir, drafter: spec(), settings: { maxIterations: 3, patience: 1 }, cacheMode: "off" });
      expect(result).toMatchObject({ status: "finished", stopReason: "no-improvement" });
      const record = recordOf(resultDir);
      expect(record.drafts).toHaveLength(2);
      expect(record.bestDraft).toBe(0);
      expect(record.drafts[1].selfScore).toBeLessThan(record.drafts[0].selfScore);
      // The first draft was the true page: the final page is it, its asset links resolved for the agent's folder.
      expect(pageOf(resultDir)).toBe(referencePageHtml(task, agentDirFor(resultDir, TASK_ID, "gpt-4o")));
    },
    AGENT_TEST_MS,
  );

  it(
    "breadth 3: the right draft of three is selected, the three self-checks run at once",
    async () => {
      // The three requests are identical (the sample index is only in the cache key): answers go by arrival.
      const model = scriptedAgentModel({ analyze: [storyboard()], draft: [scriptlessPageReply(task), truePageReply(task), scriptlessPageReply(task)] });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "breadth");
      const [result] = await runAgentRun({
        tasks: [task],
        resultDir,
        drafter: spec({ temperature: 0.8 }),
        settings: { breadth: 3, maxIterations: 0 },
        cacheMode: "read-write",
        cacheDir: path.join(dir, "cache"),
      });
      expect(result).toMatchObject({ status: "finished", stopReason: "max-iterations" });
      expect(kinds()).toEqual(["analyze", "draft", "draft", "draft"]);
      const record = recordOf(resultDir);
      const drafts = record.drafts as Array<{ id: number; selfScore: number; selfCheckSpan: { startMs: number; endMs: number }; requestHashes: string[] }>;
      expect(drafts).toHaveLength(3);
      expect(new Set(drafts.map((draft) => draft.requestHashes[0])).size).toBe(3);
      const best = drafts.find((draft) => draft.id === record.bestDraft)!;
      expect(best.selfScore).toBe(Math.max(...drafts.map((draft) => draft.selfScore)));
      expect(pageOf(resultDir)).toContain("<script");
      const latestStart = Math.max(...drafts.map((draft) => draft.selfCheckSpan.startMs));
      const earliestEnd = Math.min(...drafts.map((draft) => draft.selfCheckSpan.endMs));
      expect(latestStart).toBeLessThan(earliestEnd);
    },
    AGENT_TEST_MS,
  );
});
