import { type Command, Option } from "commander";
import { DEFAULT_CLI_PROFILE } from "../../protocol.ts";

/** `iwr tasks validate|list <data.jsonl>`: check and show a task set in the official layout. */
export function registerTasksCommand(program: Command): void {
  const tasks = program.command("tasks").description("check and show task sets (<name>.jsonl + <name>/<id>/ folders)");

  tasks
    .command("validate")
    .description("report every problem in a task file and its task folders; exit 1 if there is any")
    .argument("<data>", "the task file, e.g. tasks/iwr-mini.jsonl")
    .option("--no-media", "skip probing videos with ffprobe and reading PNG headers (faster, less thorough)")
    .addOption(
      new Option("--protocol <profile>", "official: a line without a resolution falls back as the harness does (a warning); corrected: it is a problem")
        .choices(["official", "corrected"])
        .default(DEFAULT_CLI_PROFILE),
    )
    .action(async (data: string, options: { media: boolean; protocol: "official" | "corrected" }) => {
      const { validateTaskFile } = await import("../task-views.ts");
      const { profileRules } = await import("../../protocol.ts");
      process.exitCode = await validateTaskFile(data, { checkMedia: options.media, resolutionFallback: profileRules(options.protocol).missingResolution });
    });

  tasks
    .command("list")
    .description("print a table of the tasks: id, domain, L/V class, actions, video length, assets")
    .argument("<data>", "the task file, e.g. tasks/iwr-mini.jsonl")
    .action(async (data: string) => {
      const { listTaskFile } = await import("../task-views.ts");
      process.exitCode = await listTaskFile(data);
    });
}
