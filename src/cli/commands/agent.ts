import { type Command, Option } from "commander";
import { DEFAULT_CLI_PROFILE } from "../../protocol.ts";
import { exitCodeForRun } from "../exit-codes.ts";
import { positiveInteger, taskIdList } from "../options.ts";
import { STOP_GRACE_MS } from "../process-guards.ts";

interface AgentCliOptions {
  data?: string;
  result?: string;
  model?: string;
  criticModel?: string;
  baseUrl?: string;
  trajectory: "inferred" | "given";
  analyze: boolean;
  breadth: number;
  maxIterations: number;
  critique: boolean;
  replay: boolean;
  revise: "full" | "edits";
  temperature?: number;
  patience: number;
  budgetTokens?: number;
  budgetUsd?: number;
  wallTime?: number;
  workers: number;
  cache: string;
  cacheDir?: string;
  resume?: boolean;
  force?: boolean;
  ids?: number[];
  graph?: boolean;
  feedback: "self-check" | "oracle";
  protocol?: "official" | "corrected";
  judge?: "llm" | "heuristic";
  grounding?: "llm" | "heuristic";
  judgeModel?: string;
  groundingModel?: string;
  visualPairing?: "official" | "aligned";
}

/** The flags that choose the evaluator behind oracle feedback: meaningless without it. */
const ORACLE_FLAGS = ["protocol", "judge", "grounding", "judgeModel", "groundingModel", "visualPairing"] as const;

const nonNegativeInteger = (text: string): number => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`expected a whole number ≥ 0, got '${text}'`);
  return value;
};
const positiveNumber = (text: string): number => {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`expected a number above 0, got '${text}'`);
  return value;
};
const temperature = (text: string): number => {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > 2) throw new Error(`expected a temperature from 0 to 2, got '${text}'`);
  return value;
};

/** `iwr agent`: the reconstruction agent over a task set, beside the single-pass results. */
export function registerAgentCommand(program: Command): void {
  program
    .command("agent")
    .description(
      "rebuild each task's page with the reconstruction agent (analyze, draft, self-check, critique, revise): " +
        "<result>/<id>/<model-dir>@agent/index.html + agent.json",
    )
    .option("--data <jsonl>", "task file (task folders need no checkpoints/); required")
    .option("--result <dir>", "results folder; required")
    .option("--model <name>", "drafting model: preset (configs/models/<name>.yaml), YAML file, or model id; required")
    .option("--critic-model <name>", "model for analysis and critique (default: --model)")
    .option("--base-url <url>", "OpenAI-compatible endpoint of the models this command calls (overrides the presets and OPENAI_BASE_URL)")
    .addOption(
      new Option(
        "--trajectory <kind>",
        "actions the self-check replays: inferred (the agent's analysis) or given (the task's action descriptions: a separate track)",
      )
        .choices(["inferred", "given"])
        .default("inferred"),
    )
    .option("--no-analyze", "draft from the frames alone (the single-pass prompt)")
    .option("--breadth <k>", "drafts made in parallel, first and at each revision", positiveInteger, 1)
    .option("--max-iterations <n>", "critique-and-revise rounds after the first drafts", nonNegativeInteger, 3)
    .option("--no-critique", "revise from the self-check's findings alone")
    .option("--no-replay", "self-check the initial screen only (refinement without execution)")
    .addOption(new Option("--revise <mode>", "revisions: complete pages or search/replace edits").choices(["full", "edits"]).default("full"))
    .option("--temperature <t>", "drafting temperature (default: the model's)", temperature)
    .option("--patience <n>", "rounds without a better self-score before stopping", positiveInteger, 2)
    .option("--budget-tokens <n>", "stop once this many tokens are spent", positiveInteger)
    .option("--budget-usd <x>", "stop once this much is spent (US dollars, from the models' pricing)", positiveNumber)
    .option("--wall-time <seconds>", "start no new round after this long", positiveNumber)
    .option("--workers <n>", "tasks in progress at once", positiveInteger, 1)
    .option("--cache <mode>", "response cache: read-write | replay | off", "read-write")
    .option("--cache-dir <dir>", "response cache folder (default .cache/responses, or IWR_CACHE_DIR)")
    .option("--resume", "continue interrupted tasks from their last checkpoint")
    .option("--force", "run every task again, also finished ones")
    .option("--ids <list>", "only these task ids, e.g. 1,2", taskIdList)
    .addOption(
      new Option(
        "--feedback <kind>",
        "what the agent learns about each draft: self-check (its own check against the video) or oracle (the fixed evaluator's verdict: " +
          "oracle feedback (uses the task's truth), a separate track in <model-dir>@agent-oracle/ that bounds what refinement can gain)",
      )
        .choices(["self-check", "oracle"])
        .default("self-check"),
    )
    .addOption(
      new Option("--protocol <profile>", "with --feedback oracle: the evaluator's protocol profile (default official)").choices(["official", "corrected"]),
    )
    .addOption(new Option("--judge <kind>", "with --feedback oracle: the evaluator's assertion judge (default llm)").choices(["llm", "heuristic"]))
    .addOption(new Option("--grounding <kind>", "with --feedback oracle: the evaluator's grounding (default llm)").choices(["llm", "heuristic"]))
    .option("--judge-model <name>", "with --feedback oracle: the evaluator's judge model (default gpt-4o)")
    .option("--grounding-model <name>", "with --feedback oracle: the evaluator's grounding model, when it differs from the judge's")
    .addOption(
      new Option("--visual-pairing <mode>", "with --feedback oracle: the evaluator's pairing (default: the profile's)").choices(["official", "aligned"]),
    )
    .option("--graph", "print the graph's nodes and edges and exit")
    .action(async (options: AgentCliOptions) => {
      process.exitCode = await agentAction(options);
    });
}

async function agentAction(options: AgentCliOptions): Promise<number> {
  if (options.graph) {
    const { graphAsText } = await import("../../../agents/reconstruct/index.ts");
    console.log(await graphAsText());
    return 0;
  }
  const [{ loadModelSpec, parseCacheMode }, { loadTasks }, { runAgentRun, usageSummaryLines }, { IwrError }, { modelFolderName }, { profileRules }] =
    await Promise.all([
      import("../../models/index.ts"),
      import("../../tasks/loader.ts"),
      import("../../run/agent.ts"),
      import("../../errors.ts"),
      import("../../results/layout.ts"),
      import("../../protocol.ts"),
    ]);
  const missing = (["data", "result", "model"] as const).filter((name) => options[name] === undefined).map((name) => `--${name}`);
  if (missing.length > 0) throw new IwrError("CONFIG_INVALID", `iwr agent needs ${missing.join(", ")} (or --graph alone)`);
  const oracle = options.feedback === "oracle";
  const stray = ORACLE_FLAGS.filter((flag) => options[flag] !== undefined);
  if (!oracle && stray.length > 0) {
    const names = stray.map((flag) => `--${flag.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`);
    throw new IwrError("CONFIG_INVALID", `${names.join(", ")} choose the evaluator behind --feedback oracle; the self-check agent has none`);
  }
  const protocol = options.protocol ?? DEFAULT_CLI_PROFILE;
  const { data, result, model } = options as Required<Pick<AgentCliOptions, "data" | "result" | "model">>;
  const cacheMode = parseCacheMode(options.cache);
  if (!/\.ya?ml$/i.test(model)) modelFolderName(model, "--model");
  const drafter = loadModelSpec(model, { baseURL: options.baseUrl }, { source: "--model" });
  const critic = options.criticModel ? loadModelSpec(options.criticModel, { baseURL: options.baseUrl }, { source: "--critic-model" }) : undefined;
  // The agent reads inputs only: checkpoints are not needed (and never opened), unless its feedback is the evaluator's.
  let tasks = await loadTasks(data, oracle ? { resolutionFallback: profileRules(protocol).missingResolution } : { needsCheckpoints: false });
  if (options.ids) {
    const unknown = options.ids.filter((id) => !tasks.some((task) => task.id === id));
    if (unknown.length > 0) throw new IwrError("CONFIG_INVALID", `--ids: no task with id ${unknown.join(", ")} in ${data}`);
    tasks = tasks.filter((task) => options.ids!.includes(task.id));
  }
  // First SIGINT/SIGTERM: stop at the next node boundary, checkpoint kept; a node still running after
  // the grace period (a model call, a page) is cancelled; a second signal exits at once.
  let stopRequested = false;
  const hardStop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopRequested) process.exit(130);
    stopRequested = true;
    console.error(`${signal}: stopping after the current node; one still running in ${STOP_GRACE_MS / 1000} s is cancelled (iwr agent --resume continues)`);
    setTimeout(() => hardStop.abort(), STOP_GRACE_MS).unref();
  };
  const { lockResults } = await import("../result-lock.ts");
  const { AGENT_FOLDER_SUFFIX } = await import("../../results/layout.ts");
  const lock = lockResults(result, `${drafter.name}${AGENT_FOLDER_SUFFIX}`, `iwr agent --model ${drafter.name}`);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const evaluator = oracle ? await oracleEvaluator(options, protocol) : undefined;
  try {
    const results = await runAgentRun({
      tasks,
      resultDir: result,
      drafter,
      ...(critic ? { critic } : {}),
      settings: {
        trajectory: options.trajectory,
        analyze: options.analyze,
        breadth: options.breadth,
        maxIterations: options.maxIterations,
        critique: options.critique,
        replay: options.replay,
        revise: options.revise,
        patience: options.patience,
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.budgetTokens !== undefined ? { budgetTokens: options.budgetTokens } : {}),
        ...(options.budgetUsd !== undefined ? { budgetUsd: options.budgetUsd } : {}),
        ...(options.wallTime !== undefined ? { wallTimeSec: options.wallTime } : {}),
      },
      cacheMode,
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      workers: options.workers,
      ...(options.resume ? { resume: true } : {}),
      ...(options.force ? { force: true } : {}),
      shouldStop: () => stopRequested,
      ...(evaluator
        ? { feedback: "oracle" as const, oracle: { evaluator: async () => evaluator, pairing: options.visualPairing ?? profileRules(protocol).pairing } }
        : {}),
      signal: hardStop.signal,
      onProgress: (taskId, event) => {
        const score = event.bestSelfScore ?? event.selfScore;
        const tokens =
          event.inputTokens !== undefined ? ` · ${event.inputTokens} in / ${event.outputTokens ?? 0} out tokens · $${(event.costUsd ?? 0).toFixed(4)}` : "";
        console.error(
          `task ${taskId} · ${event.node} · round ${event.round}${event.draft !== undefined ? ` · draft ${event.draft}` : ""}` +
            `${score !== undefined ? ` · self-score ${score.toFixed(3)}` : ""}` +
            `${tokens}${event.message ? ` · ${event.message}` : ""}`,
        );
      },
    });
    for (const result of results) {
      const scoreName = oracle ? "best draft's Final (its oracle score)" : "best self-score";
      const score = result.bestSelfScore !== undefined ? `, ${scoreName} ${result.bestSelfScore.toFixed(4)}` : "";
      const why = result.stopReason ? ` (${result.stopReason})` : "";
      console.error(
        `task ${result.id}: ${result.status}${why}${score}${result.error ? `: ${result.error.code}: ${result.error.message}` : ""} → ${result.dir}`,
      );
    }
    const usage = usageSummaryLines(results);
    if (usage.length > 0) console.error(`model usage by node:\n${usage.join("\n")}`);
    const failed = results.filter((result) => result.status === "failed" || result.status === "stopped").length;
    return exitCodeForRun(failed);
  } finally {
    lock.release();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await evaluator?.close?.();
  }
}

/** The fixed evaluator behind oracle feedback, as `iwr evaluate` would make it from the same flags. */
async function oracleEvaluator(options: AgentCliOptions, protocol: "official" | "corrected") {
  const [{ createEvaluator }, { ORACLE_FEEDBACK_LABEL }] = await Promise.all([
    import("../../evaluator/create-evaluator.ts"),
    import("../../results/tracks.ts"),
  ]);
  const judge = options.judge ?? "llm";
  const grounding = options.grounding ?? "llm";
  console.error(
    `iwr agent: ${ORACLE_FEEDBACK_LABEL}: each draft is scored by the fixed evaluator (protocol ${protocol}, judge ${judge}, grounding ${grounding}) ` +
      "and the agent is told which steps failed and why; its pages go to <model-dir>@agent-oracle/, a separate track",
  );
  return createEvaluator({
    profile: protocol,
    judge,
    grounding,
    ...(options.judgeModel ? { judgeModel: options.judgeModel } : {}),
    ...(options.groundingModel ? { groundingModel: options.groundingModel } : {}),
    ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    workers: options.workers,
  });
}
