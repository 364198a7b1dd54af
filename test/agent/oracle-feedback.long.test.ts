/**
 * The oracle-feedback arm end to end (`iwr run`, real Chromium, real OCR, the offline
 * evaluator, models scripted on a local OpenAI-compatible server — a fixture: what it
 * answers is chosen here, never presented as a result).
 *
 * The scripted model starts from a bundled task's true page with the handler of one action
 * removed (the FAQ's "Expand all" button, action 4 of 6), and fixes exactly the step it is
 * told about: a revision whose problems text names action 4 gets the true page back, any
 * other the same broken page. Four arms on that task: the single pass (the broken page),
 * the agent with its self-check feedback, the agent with oracle feedback (uses the task's
 * truth), and the true page itself (reference) for the ceiling. Oracle feedback must reach
 * the true page within two rounds; the self-check reaches what its findings allow. The
 * two agents' first draft requests are the same request, yet neither is answered from the
 * other's cache entry; the oracle's pages, records and report entries carry its label.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { referencePagePath } from "../../src/calibration/calibration.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { ORACLE_FEEDBACK_LABEL } from "../../src/results/tracks.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { CRITIQUE_REPLY, requestKind, storyboardReply } from "../support/agent-scripts.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, evaluatorBlock, experimentFixture, readJson, TEST_MS, writeConfig } from "../support/experiment.ts";
import { messageParts, type RecordedRequest } from "../support/openai-server.ts";

const TASK_ID = 3;
/** Action 4 (0-based 3): "Click the 'Expand all' button". */
const BROKEN_ACTION = 4;
const HANDLER = 'getElementById("expand-all").addEventListener';
const fixture = experimentFixture("oracle-feedback");
let task: Task;
let truePage: string;
beforeAll(async () => {
  task = (await loadTasks(DATA)).find((candidate) => candidate.id === TASK_ID)!;
  truePage = fs.readFileSync(referencePagePath(task), "utf8");
});

const fence = (html: string) => `\`\`\`html\n${html}\n\`\`\``;
/** The true page with the handler of one action removed: its listener is never added. */
const brokenPage = () => truePage.replace(HANDLER, 'getElementById("expand-all").removeEventListener');
const textOf = (request: RecordedRequest) =>
  (request.body?.messages ?? [])
    .flatMap((_, index) => messageParts(request, index))
    .map((part) => (part.type === "text" ? String(part.text) : ""))
    .join("\n");
const imagesOf = (request: RecordedRequest) =>
  (request.body?.messages ?? []).flatMap((_, index) =>
    messageParts(request, index).flatMap((part) =>
      part.type === "image_url" ? [Buffer.from((part.image_url as { url: string }).url.split(",")[1] ?? "", "base64")] : [],
    ),
  );
const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

/** Per draft of an agent cell: its round, and whether its page has the step fixed. */
function draftsOf(agentDir: string): Array<{ id: number; round: number; fixed: boolean; score?: number }> {
  const record = readJson(path.join(agentDir, "agent.json")) as { drafts: Array<{ id: number; round: number; page?: { path: string }; selfScore?: number }> };
  return record.drafts.map((draft) => ({
    id: draft.id,
    round: draft.round,
    fixed: draft.page ? fs.readFileSync(draft.page.path, "utf8").includes(HANDLER) : false,
    ...(draft.selfScore !== undefined ? { score: draft.selfScore } : {}),
  }));
}

describe("oracle feedback (uses the task's truth), end to end", () => {
  it(
    "reaches the true page within two rounds, beside the self-check agent and the single pass; labelled and kept apart everywhere",
    async () => {
      expect(brokenPage()).not.toBe(truePage);
      const revisions: Array<{ namesTheStep: boolean }> = [];
      fixture.server().setReplyFunction((request) => {
        const kind = requestKind(request);
        if (kind === "analyze") return storyboardReply(task.line.action_sequence.map(replayActionOf));
        if (kind === "generate" || kind === "draft") return fence(brokenPage());
        if (kind === "critique") return CRITIQUE_REPLY;
        // A reviser that fixes exactly the step it is told about.
        const namesTheStep = new RegExp(`\\baction ${BROKEN_ACTION}\\b`).test(textOf(request));
        revisions.push({ namesTheStep });
        return fence(namesTheStep ? truePage : brokenPage());
      });
      const armsBlock = (name: string, extra = "") =>
        `  - name: ${name}\n    kind: agent\n    model: gpt-4o\n    baseURL: ${fixture.server().baseURL}\n` +
        `    agent: { maxIterations: 2, patience: 2${extra} }\n`;
      const runDir = path.join(fixture.dir(), "run");
      const config = writeConfig(
        path.join(fixture.dir(), "oracle.yaml"),
        `name: oracle-bound
tasks:
  file: ${DATA}
  ids: [${TASK_ID}]
out: ${runDir}
concurrency: 1
cache: read-write
${evaluatorBlock}arms:
  - name: single
    kind: single-pass
    model: gpt-4o
    baseURL: ${fixture.server().baseURL}
${armsBlock("agent")}${armsBlock("oracle", ", feedback: oracle")}  - name: reference
    kind: reference
`,
      );
      const output: string[] = [];
      expect(await runIwrCapturing(output, ["run", config]), output.join("\n")).toBe(0);

      const cellDir = (arm: string, folder: string) => path.join(runDir, "arms", arm, "repeat-0", String(TASK_ID), folder);
      const final = (arm: string, folder: string) => readJson(path.join(cellDir(arm, folder), "eval.json")).scores.final as number;
      const finals = {
        single: final("single", "gpt-4o"),
        selfCheck: final("agent", "gpt-4o@agent"),
        oracle: final("oracle", "gpt-4o@agent-oracle"),
        reference: final("reference", "reference"),
      };

      // The oracle: its own folder; the step it was told about is fixed within two rounds, and its page scores as the true page does.
      const oracleDir = cellDir("oracle", "gpt-4o@agent-oracle");
      const oracleDrafts = draftsOf(oracleDir);
      const oracleFixedAt = oracleDrafts.find((draft) => draft.fixed)?.round;
      expect(oracleFixedAt, JSON.stringify(oracleDrafts)).toBeDefined();
      expect(oracleFixedAt!).toBeLessThanOrEqual(2);
      expect(finals.oracle).toBeCloseTo(finals.reference, 6);
      expect(finals.oracle).toBeGreaterThan(finals.single);
      const selfDrafts = draftsOf(cellDir("agent", "gpt-4o@agent"));
      const selfFixedAt = selfDrafts.find((draft) => draft.fixed)?.round;
      expect(finals.selfCheck).toBeLessThanOrEqual(finals.oracle + 1e-9);

      // Labelled: agent.json, cell.json and every report say so.
      const agentRecord = readJson(path.join(oracleDir, "agent.json"));
      expect(agentRecord).toMatchObject({ feedback: "oracle", feedbackLabel: ORACLE_FEEDBACK_LABEL });
      expect(readJson(path.join(cellDir("agent", "gpt-4o@agent"), "agent.json")).feedback).toBe("self-check");
      expect(readJson(path.join(oracleDir, "cell.json")).kind).toBe(`agent, ${ORACLE_FEEDBACK_LABEL}`);
      const report = readJson(path.join(runDir, "report.json"));
      expect(report.arms.find((arm: { name: string }) => arm.name === "oracle").kind).toBe(`agent, ${ORACLE_FEEDBACK_LABEL}`);
      expect(report.arms.find((arm: { name: string }) => arm.name === "agent").kind).toBe("agent");
      const [bound] = report.feedbackBounds;
      expect(bound.arms).toEqual({ oracle: "oracle", selfCheck: "agent", singlePass: "single" });
      expect(bound.perTask).toEqual([{ taskId: TASK_ID, oracle: finals.oracle, selfCheck: finals.selfCheck, singlePass: finals.single }]);
      expect(bound.comparisons.map((c: { a: string; b: string }) => `${c.a}-${c.b}`)).toEqual(["oracle-agent", "agent-single", "oracle-single"]);
      for (const file of ["report.md", "report.html"]) expect(fs.readFileSync(path.join(runDir, file), "utf8")).toContain(ORACLE_FEEDBACK_LABEL);
      expect(output.join("\n")).toContain(`agent, ${ORACLE_FEEDBACK_LABEL}`);

      // The evaluator's records of the oracle's drafts sit outside its work folder; none inside it.
      for (const draft of oracleDrafts) expect(fs.existsSync(path.join(oracleDir, "oracle-scores", String(draft.id), "eval.json"))).toBe(true);
      const work = path.join(oracleDir, "work");
      expect(fs.readdirSync(work, { recursive: true }).filter((name) => String(name).endsWith("eval.json"))).toEqual([]);

      // Never a shared cache entry: the two agents' first draft requests are the same request, and both reached the model.
      const drafts = fixture
        .server()
        .chatRequests()
        .filter((request) => requestKind(request) === "draft");
      expect(drafts).toHaveLength(2);
      expect(JSON.stringify(drafts[0]!.body)).toBe(JSON.stringify(drafts[1]!.body));
      // The truth reached the oracle's critic (its reference checkpoints beside its screens), and never the self-check agent.
      // Cells generate one at a time here, so the self-check agent's requests are those before the oracle's first draft.
      const requests = fixture.server().chatRequests();
      const oracleStart = requests.indexOf(drafts[1]!);
      const checkpoints = new Set(task.truth.checkpointPaths.map((file) => sha256(fs.readFileSync(file))));
      const critiquesOf = (from: number, to: number) => requests.slice(from, to).filter((request) => requestKind(request) === "critique");
      const oracleCritiques = critiquesOf(oracleStart, requests.length);
      expect(oracleCritiques.length).toBeGreaterThan(0);
      for (const request of oracleCritiques) expect(imagesOf(request).some((image) => checkpoints.has(sha256(image)))).toBe(true);
      // An image of the self-check agent may equal a checkpoint only when it is one of its own screenshots (a page rendered as recorded).
      const ownShots = new Set(
        fs
          .readdirSync(path.join(cellDir("agent", "gpt-4o@agent"), "work"), { recursive: true })
          .map(String)
          .filter((name) => name.endsWith(".png"))
          .map((name) => sha256(fs.readFileSync(path.join(cellDir("agent", "gpt-4o@agent"), "work", name)))),
      );
      const selfImages = requests.slice(requests.indexOf(drafts[0]!), oracleStart).flatMap(imagesOf).map(sha256);
      expect(selfImages.filter((hash) => checkpoints.has(hash) && !ownShots.has(hash))).toEqual([]);

      console.info(
        `oracle-vs-self-check (task ${TASK_ID}, action ${BROKEN_ACTION}'s handler removed): Final single pass ${finals.single.toFixed(4)}, ` +
          `agent self-check ${finals.selfCheck.toFixed(4)} (step fixed in round ${selfFixedAt ?? "never"}), ` +
          `agent oracle ${finals.oracle.toFixed(4)} (step fixed in round ${oracleFixedAt}), true page ${finals.reference.toFixed(4)}; ` +
          `revisions naming the step: ${revisions.filter((entry) => entry.namesTheStep).length} of ${revisions.length}; ` +
          `self-check drafts ${JSON.stringify(selfDrafts)}; oracle drafts ${JSON.stringify(oracleDrafts)}`,
      );
    },
    TEST_MS,
  );
});
