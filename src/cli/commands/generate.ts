import { type Command, Option } from "commander";
import { DEFAULT_CLI_PROFILE, profileRules } from "../../protocol.ts";
import type { GenerateProgress } from "../../run/generate.ts";
import { exitCodeForRun } from "../exit-codes.ts";
import { positiveInteger, taskIdList } from "../options.ts";

interface GenerateCommandOptions {
  data: string;
  result: string;
  model: string;
  baseUrl?: string;
  workers?: number;
  cache: string;
  cacheDir?: string;
  force?: boolean;
  ids?: number[];
  protocol: "official" | "corrected";
}

/** `iwr generate`: the single-pass generator over a task set, into the benchmark's results layout. */
export function registerGenerateCommand(program: Command): void {
  program
    .command("generate")
    .description("rebuild each task's page with one model call (single pass): <result>/<id>/<model-dir>/index.html + generation.json")
    .requiredOption("--data <jsonl>", "task file in the dataset layout, e.g. tasks/iwr-mini.jsonl")
    .requiredOption("--result <dir>", "results folder")
    .requiredOption("--model <name>", "model preset (configs/models/<name>.yaml), a YAML file, or any model id the endpoint serves")
    .option("--base-url <url>", "OpenAI-compatible endpoint (overrides the preset and OPENAI_BASE_URL)")
    .option("--workers <n>", "tasks in progress at once (default: the model's concurrency)", positiveInteger)
    .option("--cache <mode>", "response cache: read-write | replay | off", "read-write")
    .option("--cache-dir <dir>", "response cache folder (default .cache/responses, or IWR_CACHE_DIR)")
    .option("--force", "regenerate every task, also finished ones and pages not made by iwr generate")
    .option("--ids <list>", "only these task ids, e.g. 1,2", taskIdList)
    .addOption(
      new Option(
        "--protocol <profile>",
        "official: the harness's generation (its per-model limits, int(duration) frames as JPEG, every reply written); " +
          "corrected: ours (see the README's deviations table)",
      )
        .choices(["official", "corrected"])
        .default(DEFAULT_CLI_PROFILE),
    )
    .action(async (options: GenerateCommandOptions) => {
      process.exitCode = await generateAction(options);
    });
}

async function generateAction(options: GenerateCommandOptions): Promise<number> {
  // Loaded on use, so `iwr --help` does not pay for LangChain and sharp.
  const [{ loadModelSpec, parseCacheMode }, { loadTasks }, { runGeneration, summaryLine }, { IwrError }, { modelFolderName }] = await Promise.all([
    import("../../models/index.ts"),
    import("../../tasks/loader.ts"),
    import("../../run/generate.ts"),
    import("../../errors.ts"),
    import("../../results/layout.ts"),
  ]);
  const cacheMode = parseCacheMode(options.cache);
  // A bare model name becomes the result folder's name: checked before anything is read or written
  // (a preset's own `name:` is checked, with its file and line, when the preset is read).
  if (!/\.ya?ml$/i.test(options.model)) modelFolderName(options.model, "--model");
  const spec = loadModelSpec(options.model, { baseURL: options.baseUrl }, { source: "--model" });
  let tasks = await loadTasks(options.data, { resolutionFallback: profileRules(options.protocol).missingResolution });
  if (options.ids) {
    const known = new Set(tasks.map((task) => task.id));
    const unknown = options.ids.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new IwrError("CONFIG_INVALID", `--ids: no task with id ${unknown.join(", ")} in ${options.data}`);
    const wanted = new Set(options.ids);
    tasks = tasks.filter((task) => wanted.has(task.id));
  }
  const { lockResults } = await import("../result-lock.ts");
  const lock = lockResults(options.result, spec.name, `iwr generate --model ${spec.name}`);
  const progress = await progressReporter(tasks.length, spec.name);
  try {
    const summary = await runGeneration({
      // The generator sees each task's inputs only.
      tasks: tasks.map((task) => task.inputs),
      resultDir: options.result,
      spec,
      cacheMode,
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      ...(options.workers ? { workers: options.workers } : {}),
      force: options.force ?? false,
      protocol: options.protocol,
      onProgress: progress.update,
    });
    progress.stop();
    console.error(summaryLine(summary, spec.name));
    const failed = summary.results.filter((result) => result.status === "failed");
    if (failed.length > 0) console.error(`${failed.length} of ${summary.total} task(s) failed; each error is in its generation.json:`);
    for (const task of failed) {
      console.error(`  task ${task.id}: ${task.error?.code ?? "FAILED"}: ${task.error?.message ?? "no page"} (see ${task.outputDir}/generation.json)`);
    }
    return exitCodeForRun(failed.length);
  } finally {
    progress.stop();
    lock.release();
  }
}

interface ProgressReporter {
  update: (progress: GenerateProgress) => void;
  stop: () => void;
}

/** A progress bar on stderr when it is a terminal; nothing otherwise (logs and CI stay clean). */
async function progressReporter(total: number, modelName: string): Promise<ProgressReporter> {
  if (!process.stderr.isTTY || total === 0) return { update: () => undefined, stop: () => undefined };
  const { default: cliProgress } = await import("cli-progress");
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `generate ${modelName} [{bar}] {value}/{total} tasks | {failed} failed | {tokensIn} in / {tokensOut} out tokens | \${cost}`,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { failed: 0, tokensIn: 0, tokensOut: 0, cost: "0.0000" });
  let stopped = false;
  return {
    update: (progress) =>
      bar.update(progress.done, {
        failed: progress.failed,
        tokensIn: progress.usage.inputTokens,
        tokensOut: progress.usage.outputTokens,
        cost: progress.usage.costUsd.toFixed(4),
      }),
    stop: () => {
      if (!stopped) bar.stop();
      stopped = true;
    },
  };
}
