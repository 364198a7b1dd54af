import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { GenerateProgress } from "../../run/generate.ts";

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
}

function positiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError(`expected a positive integer, got '${text}'`);
  return value;
}

function idList(text: string): number[] {
  const ids = text.split(",").map((part) => part.trim()).filter((part) => part !== "");
  const bad = ids.filter((id) => !/^\d+$/.test(id));
  if (ids.length === 0 || bad.length > 0) throw new InvalidArgumentError(`expected task ids like 1,2,7, got '${text}'`);
  return ids.map(Number);
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
    .option("--force", "regenerate tasks that already have an index.html")
    .option("--ids <list>", "only these task ids, e.g. 1,2", idList)
    .action(async (options: GenerateCommandOptions) => {
      process.exitCode = await generateAction(options);
    });
}

async function generateAction(options: GenerateCommandOptions): Promise<number> {
  // Loaded on use, so `iwr --help` does not pay for LangChain and sharp.
  const [{ loadModelSpec, parseCacheMode }, { loadTasks }, { runGeneration, summaryLine }, { IwrError }] = await Promise.all([
    import("../../models/index.ts"),
    import("../../tasks/loader.ts"),
    import("../../run/generate.ts"),
    import("../../errors.ts"),
  ]);
  const cacheMode = parseCacheMode(options.cache);
  const spec = loadModelSpec(options.model, { baseURL: options.baseUrl });
  let tasks = await loadTasks(options.data);
  if (options.ids) {
    const known = new Set(tasks.map((task) => task.id));
    const unknown = options.ids.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new IwrError("CONFIG_INVALID", `--ids: no task with id ${unknown.join(", ")} in ${options.data}`);
    const wanted = new Set(options.ids);
    tasks = tasks.filter((task) => wanted.has(task.id));
  }
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
      onProgress: progress.update,
    });
    progress.stop();
    console.error(summaryLine(summary, spec.name));
    for (const failed of summary.results.filter((result) => result.status === "failed")) {
      console.error(`  task ${failed.id}: ${failed.error?.code ?? "FAILED"}: ${failed.error?.message ?? "no page"} (see ${failed.outputDir}/generation.json)`);
    }
    return 0;
  } finally {
    progress.stop();
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
