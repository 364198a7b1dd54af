import type { Command } from "commander";
import { MAX_RANDOM_SEED } from "../../browser/determinism.ts";
import { IwrError } from "../../errors.ts";

interface RecordFlags {
  site?: string;
  script: string;
  data: string;
  id?: string;
  resolution?: string;
  force?: boolean;
  seed?: string;
  allowNoImages?: boolean;
  clock?: string;
}

const CLOCKS = ["auto", "shifted", "stepped"] as const;

function parseClock(text: string): (typeof CLOCKS)[number] {
  const clock = CLOCKS.find((name) => name === text);
  if (!clock) throw new IwrError("CONFIG_INVALID", `--clock: expected one of ${CLOCKS.join(", ")}, got '${text}'`);
  return clock;
}

function parseId(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new IwrError("CONFIG_INVALID", `--id: expected a non-negative integer, got '${text}'`);
  return Number(text);
}

function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > MAX_RANDOM_SEED)
    throw new IwrError("CONFIG_INVALID", `--seed: expected an integer 0..${MAX_RANDOM_SEED}, got '${text}'`);
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
    .option("--seed <n>", "seed of the page's Math.random while recording, stored in the task line (default: the script's seed:, else a fixed one)")
    .option("--allow-no-images", "record a site whose first screen shows no image (default: the script's allow_no_images:, else refused by the preflight)")
    .option(
      "--clock <auto|shifted|stepped>",
      "the page's clock: auto (default) steps it for a page that never rests or whose timers change it across pictures, " +
        "shifted runs it from a fixed start (README, 'A page that never rests', 'A page that changes itself later')",
    )
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
          ...(flags.seed !== undefined && { seed: parseSeed(flags.seed) }),
          ...(flags.allowNoImages && { allowNoImages: true }),
          ...(flags.clock !== undefined && { clock: parseClock(flags.clock) }),
        });
        const waits = [result.settles.initial, ...result.settles.afterActions];
        const atBound = waits.filter((settle) => !settle.atRest).length;
        console.log(
          `task ${result.id} -> ${result.dir} (${result.line.action_sequence.length} actions, ${result.checkpointCount} checkpoints, ` +
            `${result.assets.length} assets shown, ${result.captured.length} site files beside the reference, seed ${result.determinism.randomSeed}` +
            `${result.determinism.steppedClock ? ", stepped clock" : ""}, ` +
            `${result.videoSec.toFixed(1)} s video, ${(result.timings.msPerAction / 1000).toFixed(2)} s/action, ` +
            `longest wait for rest ${(Math.max(...waits.map((settle) => settle.waitedMs)) / 1000).toFixed(2)} s` +
            `${atBound > 0 ? `, ${atBound} of ${waits.length} pictures taken at the bound` : ""})`,
        );
      } finally {
        await closeSharedBrowser();
      }
    });
}
