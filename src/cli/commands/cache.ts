import type { Command } from "commander";

interface StatsOptions {
  dir?: string;
  readingsDir?: string;
  json?: boolean;
}

interface ClearOptions {
  dir?: string;
  model?: string;
  readingsDir?: string;
  responses?: boolean;
  readings?: boolean;
}

/** The image readings' folder: the option, else the environment's (undefined when switched off). */
async function readingsDirOf(option: string | undefined): Promise<string | undefined> {
  if (option) return option;
  const { defaultReadingStoreDir } = await import("../../metrics/reading-store.ts");
  return defaultReadingStoreDir();
}

/**
 * `iwr cache stats|clear`: look after the caches a run keeps between runs: model responses
 * (by request) and image readings (OCR texts, visual features, the self-check's pixels, by
 * image content).
 */
export function registerCacheCommand(program: Command): void {
  const cache = program
    .command("cache")
    .description(
      "inspect or clear the caches kept between runs: model responses (default .cache/responses, or IWR_CACHE_DIR) and image readings " +
        "(default .cache/image-readings, or IWR_READINGS_CACHE_DIR)",
    );

  cache
    .command("stats")
    .description("entries and bytes in the response cache (per model) and the image readings (per reader)")
    .option("--dir <path>", "response cache folder")
    .option("--readings-dir <path>", "image readings folder")
    .option("--json", "print the figures as JSON")
    .action(async (options: StatsOptions) => {
      const [{ cacheStats, defaultCacheDir }, { readingStoreLimitBytes, readingStoreStats }] = await Promise.all([
        import("../../models/index.ts"),
        import("../../metrics/reading-store.ts"),
      ]);
      const stats = cacheStats(options.dir ?? defaultCacheDir());
      const readingsDir = await readingsDirOf(options.readingsDir);
      const readings = readingsDir ? { ...(await readingStoreStats(readingsDir)), limitBytes: readingStoreLimitBytes() } : undefined;
      if (options.json) {
        console.log(JSON.stringify({ ...stats, ...(readings ? { readings } : {}) }, null, 2));
        return;
      }
      console.log(`responses ${stats.dir}: ${stats.entries} entries, ${formatBytes(stats.bytes)}`);
      for (const model of stats.models) console.log(`  ${model.model}: ${model.entries} entries, ${formatBytes(model.bytes)}`);
      if (!readings) {
        console.log("image readings: not kept (IWR_READINGS_CACHE_DIR=off)");
        return;
      }
      console.log(
        `image readings ${readings.dir}: ${readings.entries} entries, ${formatBytes(readings.bytes)} (kept under ${formatBytes(readings.limitBytes)})`,
      );
      for (const reader of readings.readers) console.log(`  ${reader.kind} ${reader.identity}: ${reader.entries} entries, ${formatBytes(reader.bytes)}`);
    });

  cache
    .command("clear")
    .description(
      "delete cached entries: both caches, or one (--responses, --readings); --dir and --model name the response cache, " +
        "so with either only responses are cleared unless --readings is given too",
    )
    .option("--dir <path>", "response cache folder")
    .option("--model <name>", "only this model's responses")
    .option("--readings-dir <path>", "image readings folder")
    .option("--responses", "clear the model responses")
    .option("--readings", "clear the image readings")
    .action(async (options: ClearOptions) => {
      const responses = options.responses || !options.readings;
      const readings = options.readings || (!options.responses && !options.dir && !options.model);
      if (responses) {
        const { clearCache, defaultCacheDir } = await import("../../models/index.ts");
        const dir = options.dir ?? defaultCacheDir();
        const result = clearCache(dir, { model: options.model });
        const scope = options.model ? ` of model ${options.model}` : "";
        console.log(`removed ${result.removedEntries} entries${scope} (${formatBytes(result.removedBytes)}) from ${dir}`);
      }
      if (readings) {
        const dir = await readingsDirOf(options.readingsDir);
        if (!dir) {
          console.log("image readings: not kept (IWR_READINGS_CACHE_DIR=off), nothing to clear");
          return;
        }
        const { clearReadingStore } = await import("../../metrics/reading-store.ts");
        const result = await clearReadingStore(dir);
        console.log(`removed ${result.removedEntries} image readings (${formatBytes(result.removedBytes)}) from ${dir}`);
      }
    });
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
}
