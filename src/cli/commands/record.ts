import type { Command } from "commander";
import { IwrError } from "../../errors.ts";

interface RecordFlags {
  site?: string;
  script: string;
  data: string;
  id?: string;
  resolution?: string;
  force?: boolean;
}

function parseId(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new IwrError("CONFIG_INVALID", `--id: expected a non-negative integer, got '${text}'`);
  return Number(text);
}

export function registerRecordCommand(program: Command): void {
  program
    .command("record")
    .description("record one task (video, checkpoints, assets, sheets, reference page, task line) by driving Chromium through an action script")
    .requiredOption("--script <actions.yaml>", "the action script (see src/recorder/script-schema.ts)")
    .requiredOption("--data <name.jsonl>", "task file to add the line to; the task folder goes to <name>/<id>/")
    .option("--site <folder-or-url>", "site folder holding index.html, or a 127.0.0.1 URL (default: the script's site:)")
    .option("--id <n>", "task id (default: the next free id)")
    .option("--resolution <WxH>", "viewport and video size (default: the script's, else 1280x720)")
    .option("--force", "replace an existing task with the same id")
    .action(async (flags: RecordFlags) => {
      const { recordTask } = await import("../../recorder/record-task.ts");
      const { closeSharedBrowser } = await import("../../browser/launch.ts");
      try {
        const result = await recordTask({
          script: flags.script,
          data: flags.data,
          ...(flags.site !== undefined && { site: flags.site }),
          ...(flags.id !== undefined && { id: parseId(flags.id) }),
          ...(flags.resolution !== undefined && { resolution: flags.resolution }),
          force: flags.force ?? false,
        });
        console.log(
          `task ${result.id} -> ${result.dir} (${result.line.action_sequence.length} actions, ${result.checkpointCount} checkpoints, ` +
            `${result.assets.length} assets, ${result.videoSec.toFixed(1)} s video, ${(result.timings.msPerAction / 1000).toFixed(2)} s/action)`,
        );
      } finally {
        await closeSharedBrowser();
      }
    });
}
