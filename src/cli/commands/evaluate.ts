import { type Command, Option } from "commander";
import { IwrError } from "../../errors.ts";
import { DEFAULT_CLI_PROFILE } from "../../protocol.ts";
import { exitCodeForRun } from "../exit-codes.ts";
import { positiveInteger, taskIdList } from "../options.ts";

interface EvaluateCliOptions {
  data?: string;
  result: string;
  model: string;
  judge: "llm" | "heuristic";
  grounding: "llm" | "heuristic";
  visualPairing?: "official" | "aligned";
  protocol: "official" | "corrected";
  workers: number;
  pageMemoryMb?: number;
  ids?: number[];
  judgeModel?: string;
  groundingModel?: string;
  baseUrl?: string;
  cacheDir?: string;
  promptsDir?: string;
  force?: boolean;
  rescore?: boolean;
  trace: boolean;
}

function percent(value: number | undefined): string {
  return value === undefined ? "-" : `${(value * 100).toFixed(2)}%`;
}

/** `iwr evaluate`: the fixed evaluator over a results folder (docs/protocol.md §3). */
export function registerEvaluateCommand(program: Command): void {
  program
    .command("evaluate")
    .description("replay, judge and score every candidate <result>/<id>/<model-dir>/index.html; writes eval.json per task and reports/<model>_metrics.md")
    .option("--data <jsonl>", "task file (with --rescore: only for the report's row order)")
    .requiredOption("--result <dir>", "results folder")
    .requiredOption("--model <name>", "the candidates' model name (folder: lower-cased, '/' → '__')")
    .addOption(
      new Option("--judge <kind>", "assertion judge (and MLLM visual judge): llm (official) or heuristic (offline)")
        .choices(["llm", "heuristic"])
        .default("llm"),
    )
    .addOption(new Option("--grounding <kind>", "Click/Type grounding: llm (official) or heuristic (offline)").choices(["llm", "heuristic"]).default("llm"))
    .addOption(
      new Option(
        "--protocol <profile>",
        "protocol profile: official (the published harness's rules, comparable with the leaderboard) or corrected (ours; see the README's deviations table)",
      )
        .choices(["official", "corrected"])
        .default(DEFAULT_CLI_PROFILE),
    )
    .addOption(
      new Option(
        "--visual-pairing <mode>",
        "evalpoint/checkpoint pairing, overriding the profile's (official: the harness's; aligned: corrected's); recorded in eval.json",
      ).choices(["official", "aligned"]),
    )
    .option("--workers <n>", "tasks evaluated at once in this process", positiveInteger, 1)
    .option(
      "--page-memory-mb <n>",
      "memory a candidate page may hold before it is torn down " +
        "(default: 60 % of RAM shared by the workers and this process, 512–4096 MiB; or IWR_PAGE_MEMORY_MB)",
      positiveInteger,
    )
    .option("--ids <ids...>", "only these task ids (comma or space separated)", taskIdList)
    .option("--judge-model <name>", "model preset or file for the llm judges, and the grounding unless --grounding-model (default gpt-4o)")
    .option(
      "--grounding-model <name>",
      "model preset or file for llm grounding, when it differs from the judges' (the harness's OPENAI_MODEL_NAME beside MODEL_FOR_EVAL)",
    )
    .option("--base-url <url>", "OpenAI-compatible endpoint for the judge model")
    .option("--cache-dir <dir>", "cache model responses in this folder")
    .option(
      "--prompts-dir <dir>",
      "a folder whose prompt templates replace ours by file name " +
        "(e.g. local copies of the harness's own texts; see the README's prompt table); their hashes are recorded",
    )
    .option("--force", "re-evaluate every task, also those whose eval.json scored the current page, task and settings")
    .option("--no-trace", "do not save a Playwright trace (trace.zip) of each replay")
    .option("--rescore", "recompute scores and the report from existing eval.json files only")
    .action(async (options: EvaluateCliOptions) => {
      const { modelFolderName } = await import("../../results/layout.ts");
      // The model's folder name is checked before anything is read or written.
      modelFolderName(options.model, "--model");
      const { lockResults } = await import("../result-lock.ts");
      const lock = lockResults(options.result, options.model, `iwr evaluate --model ${options.model}${options.rescore ? " --rescore" : ""}`, {
        create: false,
      });
      try {
        await evaluateAction(options);
      } finally {
        lock.release();
      }
    });
}

async function evaluateAction(options: EvaluateCliOptions): Promise<void> {
  if (options.rescore) {
    const { rescore } = await import("../../evaluator/rescore.ts");
    // With --data the report's rows follow the task file, as the harness's do (else by id).
    const { readTaskLines } = await import("../../tasks/jsonl.ts");
    const taskOrder = options.data ? (await readTaskLines(options.data)).entries.map((entry) => entry.task.id) : undefined;
    const result = rescore(options.result, options.model, taskOrder ? { taskOrder } : {});
    console.log(`rescored ${result.rows.length} task(s); report: ${result.reportPath}`);
    if (result.missing.length > 0) console.log(`no eval.json for task(s) ${result.missing.join(", ")}`);
    return;
  }
  if (!options.data) throw new IwrError("CONFIG_INVALID", "--data <jsonl> is required (unless --rescore)");
  const { runEvaluation } = await import("../../run/evaluate.ts");
  const { workers, ids } = options;
  const summary = await runEvaluation({
    dataPath: options.data,
    resultDir: options.result,
    model: options.model,
    judge: options.judge,
    grounding: options.grounding,
    profile: options.protocol,
    ...(options.visualPairing ? { pairing: options.visualPairing } : {}),
    workers,
    ...(options.pageMemoryMb ? { pageMemoryMiB: options.pageMemoryMb } : {}),
    ...(ids ? { ids } : {}),
    ...(options.judgeModel ? { judgeModel: options.judgeModel } : {}),
    ...(options.groundingModel ? { groundingModel: options.groundingModel } : {}),
    ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    ...(options.promptsDir ? { promptsDir: options.promptsDir } : {}),
    force: options.force ?? false,
    trace: options.trace,
    onTask: (outcome) => {
      const detail = outcome.status === "failed" ? (outcome.error?.message ?? "") : `IFS ${percent(outcome.ifs)} Final ${percent(outcome.final)}`;
      console.error(`task ${outcome.taskId}: ${outcome.status} ${detail} (${(outcome.wallMs / 1000).toFixed(1)} s)`);
    },
  });
  const failed = summary.tasks.filter((task) => task.status === "failed");
  const skipped = summary.tasks.filter((task) => task.status === "skipped");
  console.log(
    `evaluated ${summary.tasks.length - failed.length - skipped.length}, ` +
      `skipped ${skipped.length} (unchanged since their eval.json; --force to redo), ` +
      `failed ${failed.length} in ${(summary.wallMs / 1000).toFixed(1)} s`,
  );
  if (summary.reportPath) console.log(`report: ${summary.reportPath}`);
  if (failed.length > 0) {
    console.log(`${failed.length} of ${summary.tasks.length} task(s) failed; their errors are in eval-error.json beside each:`);
    for (const task of failed) console.log(`  task ${task.taskId}: ${task.recordDir}/eval-error.json`);
  }
  process.exitCode = exitCodeForRun(failed.length);
}
