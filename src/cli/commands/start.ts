import type { Command } from "commander";
import { positiveInteger } from "../options.ts";

interface StartCommandOptions {
  data: string;
  runDir?: string;
  workers: number;
  model?: string;
  baseUrl?: string;
  judgeModel?: string;
}

/** `npm start`: the main job on the bundled tasks (see src/run/start.ts). */
export function registerStartCommand(program: Command): void {
  program
    .command("start")
    .description(
      "the main job on the bundled tasks: validate and list them; with a model, generate and evaluate every task; then score the reference and blank pages (calibration)",
    )
    .option("--data <jsonl>", "task file", "tasks/iwr-mini.jsonl")
    .option("--run-dir <dir>", "where this run's results go (default runs/start-<time>)")
    .option("--workers <n>", "tasks evaluated at once", positiveInteger, 2)
    .option("--model <name>", "model to generate with (default: $IWR_MODEL; none = no generation)", process.env.IWR_MODEL)
    .option("--base-url <url>", "OpenAI-compatible endpoint (default: the preset's, or $OPENAI_BASE_URL)")
    .option("--judge-model <name>", "model for the evaluator's LLM judge and grounding (default: $IWR_JUDGE_MODEL; none = offline heuristics)", process.env.IWR_JUDGE_MODEL)
    .action(async (options: StartCommandOptions) => {
      const { runStart } = await import("../../run/start.ts");
      process.exitCode = await runStart({
        data: options.data,
        workers: options.workers,
        ...(options.runDir ? { runDir: options.runDir } : {}),
        ...(options.model ? { model: options.model } : {}),
        ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
        ...(options.judgeModel ? { judgeModel: options.judgeModel } : {}),
      });
    });
}
