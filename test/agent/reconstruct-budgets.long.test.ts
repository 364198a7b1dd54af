/**
 * The reconstruction agent end to end (budgets, switches and inputs): the real graph, real Chromium self-checks,
 * and a local OpenAI-compatible server on 127.0.0.1 answering from a script (a fixture: the
 * scripted answers are chosen here). Requests are counted at the server. The shared setup
 * is test/support/agent-fixture.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runAgentRun } from "../../src/run/agent.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import { AGENT_TEST_MS, dir, kinds, recordOf, server, spec, storyboard, TASK_ID, task, useAgentFixture } from "../support/agent-fixture.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, scriptlessPageReply, truePageReply } from "../support/agent-scripts.ts";

useAgentFixture();

describe("the agent's budgets and switches", () => {
  it(
    "token and cost budgets stop the loop with their reason",
    async () => {
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [scriptlessPageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const tokens = path.join(dir, "tokens");
      const [byTokens] = await runAgentRun({
        tasks: [task],
        resultDir: tokens,
        drafter: spec(),
        settings: { maxIterations: 5, replay: false, budgetTokens: 1000 },
        cacheMode: "off",
      });
      expect(byTokens).toMatchObject({ status: "finished", stopReason: "token-budget" });
      expect(recordOf(tokens).drafts).toHaveLength(1);
      const cost = path.join(dir, "cost");
      const priced = spec({ pricing: { inputPerMillion: 2.5, outputPerMillion: 10 } });
      const [byCost] = await runAgentRun({
        tasks: [task],
        resultDir: cost,
        drafter: priced,
        settings: { maxIterations: 5, replay: false, budgetUsd: 0.0001 },
        cacheMode: "off",
      });
      expect(byCost).toMatchObject({ status: "finished", stopReason: "cost-budget" });
      expect(recordOf(cost).usage.costUsd).toBeGreaterThan(0);
    },
    AGENT_TEST_MS,
  );

  it(
    "edits that do not apply fall back to a complete page; no critique revises from the findings",
    async () => {
      const badEdit = "<<<<<<< SEARCH\n<div>nowhere in the page</div>\n=======\n<div>x</div>\n>>>>>>> REPLACE";
      const model = scriptedAgentModel({
        analyze: [storyboard()],
        draft: [scriptlessPageReply(task)],
        "revise-edits": [badEdit],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      const resultDir = path.join(dir, "edits");
      await runAgentRun({
        tasks: [task],
        resultDir,
        drafter: spec(),
        settings: { maxIterations: 1, replay: false, critique: false, revise: "edits" },
        cacheMode: "off",
      });
      expect(kinds()).toEqual(["analyze", "draft", "revise-edits", "revise"]);
      const revision = recordOf(resultDir).drafts[1];
      expect(revision).toMatchObject({ origin: "revise-edits-fallback", edits: { proposed: 1, applied: 0 } });
      expect(revision.edits.failed[0]).toMatch(/is not in the page/);
    },
    AGENT_TEST_MS,
  );
});

describe("the agent's inputs", () => {
  it(
    "sends byte-identical requests for a copy of the task without checkpoints, actions or assertions, and opens no checkpoint",
    async () => {
      const model = scriptedAgentModel({ analyze: [storyboard()], draft: [scriptlessPageReply(task)] });
      server.setReplyFunction(model.reply);
      // The copy: no checkpoints/ folder, and the line's actions replaced by one empty placeholder (the schema wants one).
      const copy = path.join(dir, "stripped");
      fs.mkdirSync(path.join(copy, "iwr-mini"), { recursive: true });
      fs.cpSync(task.dir, path.join(copy, "iwr-mini", String(TASK_ID)), { recursive: true, filter: (source) => !source.includes(`${path.sep}checkpoints`) });
      const line = {
        ...task.line,
        action_sequence: [{ type: "Click", parameters: { description: "-" }, logical_assertion: "", visual_evaluation_flag: false }],
      };
      fs.writeFileSync(path.join(copy, "iwr-mini.jsonl"), `${JSON.stringify(line)}\n`);
      const [bare] = await loadTasks(path.join(copy, "iwr-mini.jsonl"), { needsCheckpoints: false });

      // The original: a private full copy, so no other test file reads its checkpoints meanwhile.
      const full = path.join(dir, "full");
      fs.mkdirSync(path.join(full, "iwr-mini"), { recursive: true });
      fs.cpSync(task.dir, path.join(full, "iwr-mini", String(TASK_ID)), { recursive: true });
      fs.writeFileSync(path.join(full, "iwr-mini.jsonl"), `${JSON.stringify(task.line)}\n`);
      const [fullTask] = await loadTasks(path.join(full, "iwr-mini.jsonl"));
      const checkpoints = fullTask!.truth.checkpointPaths;
      expect(checkpoints.length).toBeGreaterThan(0);
      // Reading a file moves a days-old access time (relatime); shown first on a probe so the check below can fail.
      const daysAgo = () => new Date(Date.now() - 3 * 24 * 3600 * 1000);
      const probe = path.join(full, "probe.bin");
      fs.writeFileSync(probe, "x");
      fs.utimesSync(probe, daysAgo(), fs.statSync(probe).mtime);
      fs.readFileSync(probe);
      const atimeMoves = fs.statSync(probe).atimeMs > Date.now() - 24 * 3600 * 1000;
      for (const file of checkpoints) fs.utimesSync(file, daysAgo(), fs.statSync(file).mtime);
      const settings = { maxIterations: 0, replay: false };
      await runAgentRun({ tasks: [fullTask!], resultDir: path.join(dir, "leak-original"), drafter: spec(), settings, cacheMode: "off" });
      if (atimeMoves) for (const file of checkpoints) expect(fs.statSync(file).atimeMs, file).toBeLessThan(Date.now() - 2 * 24 * 3600 * 1000);
      else console.warn("this filesystem does not move access times (noatime): the no-checkpoint-read check is skipped");
      const original = server.chatRequests().map((request) => JSON.stringify(request.body));
      server.requests.length = 0;
      await runAgentRun({ tasks: [bare!], resultDir: path.join(dir, "leak-copy"), drafter: spec(), settings, cacheMode: "off" });
      const stripped = server.chatRequests().map((request) => JSON.stringify(request.body));
      expect(original).toHaveLength(2);
      expect(stripped).toEqual(original);
    },
    AGENT_TEST_MS,
  );
});
