import type { Command } from "commander";

/**
 * `npm start`: the main job on the bundled tasks. Until the experiment runner
 * exists it validates and lists the bundled suite.
 */
export function registerStartCommand(program: Command): void {
  program
    .command("start")
    .description("run the main job on the bundled tasks (currently: validate and list tasks/iwr-mini.jsonl)")
    .option("--data <jsonl>", "task file", "tasks/iwr-mini.jsonl")
    .action(async (options: { data: string }) => {
      const { validateAndList } = await import("../../tasks/cli-views.ts");
      process.exitCode = await validateAndList(options.data);
    });
}
