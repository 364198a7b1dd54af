import { type Command, Option } from "commander";
import { exitCodeForRun } from "../exit-codes.ts";
import { positiveInteger, taskIdList } from "../options.ts";

interface SelfCheckCliOptions {
  data: string;
  result: string;
  model: string;
  trajectory: "given" | "inferred";
  actions?: string;
  ids?: number[];
  workers: number;
}

/** `iwr selfcheck`: the agent's feedback signal on existing pages, from the tasks' inputs only. */
export function registerSelfCheckCommand(program: Command): void {
  program
    .command("selfcheck")
    .description(
      "self-check every candidate <result>/<id>/<model-dir>/index.html against its task's video (no truth read): " +
        "selfcheck.json with selfScore, steps and findings",
    )
    .requiredOption("--data <jsonl>", "task file (task folders need no checkpoints/)")
    .requiredOption("--result <dir>", "results folder")
    .requiredOption("--model <name>", "the candidates' model name (folder: lower-cased, '/' → '__')")
    .addOption(
      new Option("--trajectory <kind>", "actions to replay: inferred (from --actions) or given (the task lines' action descriptions, a labelled ablation)")
        .choices(["given", "inferred"])
        .default("given"),
    )
    .option("--actions <file>", "JSON or YAML: task id → [{ type, description, text?, key? }] (for --trajectory inferred)")
    .option("--ids <ids...>", "only these task ids (comma or space separated)", taskIdList)
    .option("--workers <n>", "pages checked at once", positiveInteger, 1)
    .action(async (options: SelfCheckCliOptions) => {
      const { modelFolderName } = await import("../../results/layout.ts");
      modelFolderName(options.model, "--model");
      const { runSelfCheckRun } = await import("../../run/selfcheck.ts");
      const outcomes = await runSelfCheckRun({
        dataPath: options.data,
        resultDir: options.result,
        model: options.model,
        trajectory: options.trajectory,
        workers: options.workers,
        ...(options.actions ? { actionsFile: options.actions } : {}),
        ...(options.ids ? { ids: options.ids } : {}),
      });
      for (const outcome of outcomes) {
        console.log(
          outcome.status === "checked"
            ? `task ${outcome.taskId}: selfScore ${outcome.selfScore?.toFixed(4)} (${outcome.candidateDir}/selfcheck.json)`
            : `task ${outcome.taskId}: failed: ${outcome.error?.code}: ${outcome.error?.message} (${outcome.candidateDir}/selfcheck-error.json)`,
        );
      }
      const failed = outcomes.filter((outcome) => outcome.status === "failed").length;
      console.log(`self-checked ${outcomes.length - failed}, failed ${failed} (trajectory: ${options.trajectory})`);
      process.exitCode = exitCodeForRun(failed);
    });
}
