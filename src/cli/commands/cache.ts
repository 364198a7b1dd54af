import type { Command } from "commander";

/** `iwr cache stats|clear`: look after the model response cache. */
export function registerCacheCommand(program: Command): void {
  const cache = program.command("cache").description("inspect or clear the model response cache (default .cache/responses, or IWR_CACHE_DIR)");

  cache
    .command("stats")
    .description("entries, bytes and models in the response cache")
    .option("--dir <path>", "cache folder")
    .option("--json", "print the figures as JSON")
    .action(async (options: { dir?: string; json?: boolean }) => {
      const { cacheStats, defaultCacheDir } = await import("../../models/index.ts");
      const stats = cacheStats(options.dir ?? defaultCacheDir());
      if (options.json) {
        console.log(JSON.stringify(stats, null, 2));
        return;
      }
      console.log(`${stats.dir}: ${stats.entries} entries, ${formatBytes(stats.bytes)}`);
      for (const model of stats.models) console.log(`  ${model.model}: ${model.entries} entries, ${formatBytes(model.bytes)}`);
    });

  cache
    .command("clear")
    .description("delete cached answers (all, or one model's)")
    .option("--dir <path>", "cache folder")
    .option("--model <name>", "only this model's entries")
    .action(async (options: { dir?: string; model?: string }) => {
      const { clearCache, defaultCacheDir } = await import("../../models/index.ts");
      const dir = options.dir ?? defaultCacheDir();
      const result = clearCache(dir, { model: options.model });
      const scope = options.model ? ` of model ${options.model}` : "";
      console.log(`removed ${result.removedEntries} entries${scope} (${formatBytes(result.removedBytes)}) from ${dir}`);
    });
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
