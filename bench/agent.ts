/**
 * `npm run bench:agent [-- --ids 3,10 --result <dir>]`: what the agent costs besides its
 * models, on each bundled task, against the evaluator on the same page in the same run.
 *
 * The models are a scripted local OpenAI-compatible server on 127.0.0.1 (the test
 * fixture: analysis = the task's own action descriptions, drafts and revisions = the
 * task's true page), so what is timed is the agent's own work: one critique-and-revise
 * round's wall time minus the models' latency — the self-check of one draft, selection
 * and bookkeeping. Printed per task: that time, the evaluator's time on the true page
 * (heuristic judge and grounding, aligned pairing), their ratio, the largest checkpoint
 * row, and per node the requests sent (messages, images, bytes, estimated input tokens).
 * Targets: non-model time of an iteration ≤ 1.0× the evaluator's and ≤ 10 s a task.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { existingTaskFile, parseScriptArgs } from "../scripts/cli-args.ts";
import { taskIdList } from "../src/cli/options.ts";

const { values } = parseScriptArgs({
  name: "bench:agent",
  command: "npm run bench:agent --",
  summary:
    "What the agent costs besides its models, per task, with scripted models on a local server: one critique-and-revise round's " +
    "non-model time against the evaluator's on the same page (targets <= 1.0x and <= 10 s), the largest checkpoint row and the " +
    "requests each node sends. ~15 min.",
  options: {
    data: { type: "string", value: "<tasks.jsonl>", description: "the task file", default: "tasks/iwr-mini.jsonl", parse: existingTaskFile },
    ids: { type: "string", value: "<3,10>", description: "only these task ids (default: every task)", parse: (text: string) => taskIdList(text) },
    result: { type: "string", value: "<dir>", description: "where the pages and records go, kept (default: a temporary folder, removed at the end)" },
  },
});

// Loaded once the arguments are good, so that --help and a usage error answer at once
// rather than after the browser's, the evaluator's and the agent's modules.
const [
  { configureLogger },
  { loadModelSpec },
  { replayActionOf },
  { runAgentRun },
  { runCalibration },
  { loadTasks },
  { CRITIQUE_REPLY, requestKind, scriptedAgentModel, storyboardReply, truePageReply },
  { messageParts, startOpenAIServer },
] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/models/index.ts"),
  import("../src/replay/replay.ts"),
  import("../src/run/agent.ts"),
  import("../src/calibration/calibration.ts"),
  import("../src/tasks/loader.ts"),
  import("../test/support/agent-scripts.ts"),
  import("../test/support/openai-server.ts"),
]);

const TARGETS = { ratio: 1.0, seconds: 10 };

async function main(): Promise<void> {
  configureLogger({ level: "warn" });
  const resultDir = values.result ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-agent-"));
  let tasks = await loadTasks(values.data);
  const { ids } = values;
  if (ids) tasks = tasks.filter((task) => ids.includes(task.id));
  console.log(`bench:agent — ${tasks.length} task(s), one worker; results in ${resultDir}`);
  const rows = await runCalibration({ tasks, resultDir: path.join(resultDir, "evaluator"), workers: 1, pairingModes: ["aligned"] });

  const server = await startOpenAIServer({ models: ["gpt-4o"] });
  const spec = loadModelSpec("gpt-4o", { baseURL: server.baseURL, apiKeyEnv: "none" });
  const perNode = new Map<string, { requests: number; messages: number; images: number; bytes: number; tokens: number }>();
  console.log("\n| task | actions | iteration, non-model s | evaluator s | ratio | self-check s | largest checkpoint row, bytes |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|");
  const ratios: number[] = [];
  const seconds: number[] = [];
  let rounds = 0;
  try {
    for (const task of tasks) {
      const model = scriptedAgentModel({
        analyze: [storyboardReply(task.line.action_sequence.map(replayActionOf))],
        draft: [truePageReply(task)],
        critique: [CRITIQUE_REPLY],
        revise: [truePageReply(task)],
      });
      server.setReplyFunction(model.reply);
      server.requests.length = 0;
      const selectAt: number[] = [];
      await runAgentRun({
        tasks: [task],
        resultDir: path.join(resultDir, "agent"),
        drafter: spec,
        settings: { maxIterations: 1, patience: 1 },
        cacheMode: "off",
        force: true,
        onProgress: (_id, event) => {
          if (event.node === "select") selectAt.push(Date.now());
        },
      });
      const record = JSON.parse(fs.readFileSync(path.join(resultDir, "agent", String(task.id), "gpt-4o@agent", "agent.json"), "utf8"));
      const roundModelMs = (record.usageByNode.critique?.latencyMs ?? 0) + (record.usageByNode.revise?.latencyMs ?? 0);
      const reference = rows.find((row) => row.task.id === task.id && row.candidate === "reference")!;
      const evaluatorMs = reference.evaluation.replay.wallMs;
      if (selectAt.length < 2) {
        // The agent stopped before a critique-and-revise round (e.g. its first draft left no findings): nothing to time.
        const stop = typeof record.stopReason === "string" ? record.stopReason : JSON.stringify(record.stopReason ?? "unknown");
        console.log(
          `| ${task.id} | ${task.truth.actions.length} | no round (stopped: ${stop}) | ` +
            `${(evaluatorMs / 1000).toFixed(1)} | — | — | ${record.checkpoint.largestBytes} |`,
        );
      } else {
        const iterationMs = selectAt[1]! - selectAt[0]! - roundModelMs;
        rounds += 1;
        ratios.push(iterationMs / evaluatorMs);
        seconds.push(iterationMs / 1000);
        console.log(
          `| ${task.id} | ${task.truth.actions.length} | ${(iterationMs / 1000).toFixed(1)} | ${(evaluatorMs / 1000).toFixed(1)} | ` +
            `${(iterationMs / evaluatorMs).toFixed(2)} | ${((record.drafts[1]?.selfCheckMs ?? 0) / 1000).toFixed(1)} | ${record.checkpoint.largestBytes} |`,
        );
      }
      for (const request of server.chatRequests()) {
        const kind = requestKind(request);
        const entry = perNode.get(kind) ?? { requests: 0, messages: 0, images: 0, bytes: 0, tokens: 0 };
        const body = JSON.stringify(request.body);
        entry.requests += 1;
        entry.messages += request.body?.messages.length ?? 0;
        entry.images += messageParts(request).filter((part) => part.type === "image_url").length;
        entry.bytes += Buffer.byteLength(body);
        // The same estimate as the local server's usage: 4 characters a token, 85 an image.
        entry.tokens += messageParts(request).reduce(
          (sum, part) => sum + (part.type === "text" && typeof part.text === "string" ? Math.ceil(part.text.length / 4) : 85),
          0,
        );
        perNode.set(kind, entry);
      }
    }
  } finally {
    await server.close();
  }
  console.log("\n| request | sent | messages | images | MB | est. input tokens | images per request |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const [kind, entry] of perNode) {
    console.log(
      `| ${kind} | ${entry.requests} | ${entry.messages} | ${entry.images} | ` +
        `${(entry.bytes / 1e6).toFixed(2)} | ${entry.tokens} | ${(entry.images / entry.requests).toFixed(1)} |`,
    );
  }
  const round = ["critique", "revise"].reduce((sum, kind) => sum + (perNode.get(kind)?.images ?? 0), 0) / Math.max(1, rounds);
  if (ratios.length === 0) console.log("\nno task reached a critique-and-revise round: nothing to time");
  else printTargets(ratios, seconds, round, perNode.get("draft"));
  if (!values.result) fs.rmSync(resultDir, { recursive: true, force: true });
}

function printTargets(ratios: number[], seconds: number[], round: number, draft: { images: number; requests: number } | undefined): void {
  const firstImages = draft ? draft.images / draft.requests : Number.NaN;
  const worstRatio = Math.max(...ratios);
  const worstSeconds = Math.max(...seconds);
  console.log(
    `\na critique + revise round sends ${round.toFixed(1)} images; ` +
      `the first draft (as many as the single-pass request) ${firstImages.toFixed(1)}: ${(round / firstImages).toFixed(2)}× (target ≤ 0.5)`,
  );
  console.log(
    `non-model time of one iteration / evaluator time: worst ${worstRatio.toFixed(2)}, ` +
      `median ${[...ratios].sort((a, b) => a - b)[ratios.length >> 1]!.toFixed(2)} ` +
      `(target ≤ ${TARGETS.ratio}: ${worstRatio <= TARGETS.ratio ? "met" : "NOT met"})`,
  );
  console.log(
    `non-model time of one iteration: worst ${worstSeconds.toFixed(1)} s, ` +
      `median ${[...seconds].sort((a, b) => a - b)[seconds.length >> 1]!.toFixed(1)} s over ${seconds.length} task(s) with a round ` +
      `(target ≤ ${TARGETS.seconds} s: ${worstSeconds <= TARGETS.seconds ? "met" : "NOT met"})`,
  );
}

await main();
