import { Option, type Command } from "commander";
import { IwrError } from "../../errors.ts";

interface EvaluateCliOptions {
  data?: string;
  result: string;
  model: string;
  judge: "llm" | "heuristic";
  grounding: "llm" | "heuristic";
  visualPairing: "official" | "aligned";
  workers: string;
  ids?: string[];
  judgeModel?: string;
  baseUrl?: string;
  cacheDir?: string;
  force?: boolean;
  rescore?: boolean;
  trace: boolean;
}

/** "--ids 1,2 5" → [1, 2, 5]; anything that is not a task id is an error naming it. */
export function parseIds(values: readonly string[] | undefined): number[] | undefined {
  if (!values) return undefined;
  const ids = values.flatMap((value) => value.split(",")).map((part) => part.trim()).filter(Boolean);
  return ids.map((part) => {
    if (!/^\d+$/.test(part)) throw new IwrError("CONFIG_INVALID", `--ids: expected task ids (non-negative integers), got '${part}'`);
    return Number(part);
  });
}

function percent(value: number | undefined): string {
  return value === undefined ? "-" : `${(value * 100).toFixed(2)}%`;
}

/** `iwr evaluate`: the fixed evaluator over a results folder (IWR-PROTOCOL.md §3). */
export function registerEvaluateCommand(program: Command): void {
  program
    .command("evaluate")
    .description("replay, judge and score every candidate <result>/<id>/<model-dir>/index.html; writes eval.json per task and reports/<model>_metrics.md")
    .option("--data <jsonl>", "task file (not needed with --rescore)")
    .requiredOption("--result <dir>", "results folder")
    .requiredOption("--model <name>", "the candidates' model name (folder: lower-cased, '/' → '__')")
    .addOption(new Option("--judge <kind>", "assertion judge (and MLLM visual judge): llm (official) or heuristic (offline)").choices(["llm", "heuristic"]).default("llm"))
    .addOption(new Option("--grounding <kind>", "Click/Type grounding: llm (official) or heuristic (offline)").choices(["llm", "heuristic"]).default("llm"))
    .addOption(new Option("--visual-pairing <mode>", "evalpoint/checkpoint pairing: official (the harness's) or aligned").choices(["official", "aligned"]).default("official"))
    .option("--workers <n>", "tasks evaluated at once in this process", "1")
    .option("--ids <ids...>", "only these task ids (comma or space separated)")
    .option("--judge-model <name>", "model preset or file for every llm part (default gpt-4o)")
    .option("--base-url <url>", "OpenAI-compatible endpoint for the judge model")
    .option("--cache-dir <dir>", "cache model responses in this folder")
    .option("--force", "re-evaluate tasks that already have an eval.json")
    .option("--no-trace", "do not save a Playwright trace (trace.zip) of each replay")
    .option("--rescore", "recompute scores and the report from existing eval.json files only")
    .action(async (options: EvaluateCliOptions) => {
      if (options.rescore) {
        const { rescore } = await import("../../evaluator/rescore.ts");
        const result = rescore(options.result, options.model);
        console.log(`rescored ${result.rows.length} task(s); report: ${result.reportPath}`);
        if (result.missing.length > 0) console.log(`no eval.json for task(s) ${result.missing.join(", ")}`);
        return;
      }
      if (!options.data) throw new IwrError("CONFIG_INVALID", "--data <jsonl> is required (unless --rescore)");
      const workers = Number(options.workers);
      if (!Number.isInteger(workers) || workers < 1) throw new IwrError("CONFIG_INVALID", `--workers: expected a positive integer, got '${options.workers}'`);
      const { runEvaluation } = await import("../../run/evaluate.ts");
      const ids = parseIds(options.ids);
      const summary = await runEvaluation({
        dataPath: options.data,
        resultDir: options.result,
        model: options.model,
        judge: options.judge,
        grounding: options.grounding,
        pairing: options.visualPairing,
        workers,
        ...(ids ? { ids } : {}),
        ...(options.judgeModel ? { judgeModel: options.judgeModel } : {}),
        ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
        ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
        force: options.force ?? false,
        trace: options.trace,
        onTask: (outcome) => {
          const detail = outcome.status === "failed" ? outcome.error?.message ?? "" : `IFS ${percent(outcome.ifs)} Final ${percent(outcome.final)}`;
          console.error(`task ${outcome.taskId}: ${outcome.status} ${detail} (${(outcome.wallMs / 1000).toFixed(1)} s)`);
        },
      });
      const failed = summary.tasks.filter((task) => task.status === "failed");
      const skipped = summary.tasks.filter((task) => task.status === "skipped");
      console.log(
        `evaluated ${summary.tasks.length - failed.length - skipped.length}, skipped ${skipped.length} (eval.json exists; --force to redo), failed ${failed.length} in ${(summary.wallMs / 1000).toFixed(1)} s`,
      );
      if (summary.reportPath) console.log(`report: ${summary.reportPath}`);
      if (failed.length > 0) process.exitCode = 1;
    });
}
