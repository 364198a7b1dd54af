import type { Command } from "commander";

interface StartCommandOptions {
  config: string;
  data?: string;
  runDir?: string;
  model?: string;
  baseUrl?: string;
  judgeModel?: string;
}

/** `npm start`: the main job, configs/demo.yaml on the bundled tasks (see src/cli/start.ts). */
export function registerStartCommand(program: Command): void {
  program
    .command("start")
    .description(
      "the main job: validate and list the bundled tasks, then run configs/demo.yaml " +
        "(calibration arms and the self-check's agreement with the evaluator; with a model, single-pass and agent arms too) and print the report",
    )
    .option("--config <yaml>", "the experiment to run", "configs/demo.yaml")
    .option("--data <jsonl>", "a task file instead of the config's")
    .option("--run-dir <dir>", "run folder (default: the config's, runs/demo; a rerun resumes it)")
    .option("--model <name>", "model for the model arms (default: $IWR_MODEL; none = those arms are left out)")
    .option("--base-url <url>", "OpenAI-compatible endpoint of that model (default: $IWR_BASE_URL, the preset's, or $OPENAI_BASE_URL)")
    .option("--judge-model <name>", "use the official (LLM) judge and grounding with this model (default: $IWR_JUDGE_MODEL; none = offline heuristics)")
    .action(async (options: StartCommandOptions) => {
      // The setup check in this process (`npm start` has no separate prestart step: one Node start fewer on every run).
      const { ensureTools, setupSummary } = await import("../../setup/ensure-tools.ts");
      console.error(setupSummary(ensureTools()));
      const { runStart } = await import("../start.ts");
      process.exitCode = await runStart({
        config: options.config,
        ...(options.data ? { data: options.data } : {}),
        ...(options.runDir ? { runDir: options.runDir } : {}),
        ...(options.model ? { model: options.model } : {}),
        ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
        ...(options.judgeModel ? { judgeModel: options.judgeModel } : {}),
      });
    });
}
