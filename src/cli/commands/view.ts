import path from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { positiveInteger } from "../options.ts";

interface ViewCommandOptions {
  port: number;
  cacheDir?: string;
  tasks?: string;
  live: boolean;
  pollMs: number;
}

/** The port `iwr view` listens on unless told otherwise. */
export const DEFAULT_VIEW_PORT = 7375;

function port(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value > 65_535) throw new InvalidArgumentError(`expected a port number 0–65535 (0: any free port), got '${text}'`);
  return value;
}

/** `iwr view <run-dir>`: the local, read-only viewer of a run folder (src/view). */
export function registerViewCommand(program: Command): void {
  program
    .command("view")
    .description(
      "open a run folder in a local web viewer on 127.0.0.1 (read-only): arms with intervals, per task and per cell, " +
        "every step's images, the failure summary; follows new cells while iwr run writes",
    )
    .argument("<run-dir>", "a run folder made by iwr run (it holds run.json)")
    .option("--port <n>", `port on 127.0.0.1 (0: any free port)`, port, DEFAULT_VIEW_PORT)
    .option("--cache-dir <dir>", "where thumbnails are kept, outside the run folder (default .cache/view, or IWR_VIEW_CACHE_DIR)")
    .option("--tasks <file>", "the run's task file, when run.json's path no longer holds it (a run folder from another machine)")
    .option("--no-live", "read the run folder once; do not follow new cells")
    .option("--poll-ms <ms>", "how often the run folder is rescanned for new cells", positiveInteger, 2000)
    .action(async (runDir: string, options: ViewCommandOptions) => {
      const [{ startViewServer }, { defaultViewCacheDir }] = await Promise.all([import("../../view/server.ts"), import("../../view/images.ts")]);
      const server = await startViewServer({
        runDir: path.resolve(runDir),
        port: options.port,
        cacheDir: options.cacheDir ? path.resolve(options.cacheDir) : defaultViewCacheDir(),
        ...(options.tasks ? { tasksFile: options.tasks } : {}),
        pollMs: options.live ? options.pollMs : 0,
      });
      const { index } = server;
      const expected = index.expectedCells !== undefined ? ` of ${index.expectedCells}` : "";
      console.log(`${index.name}: ${index.cells().length}${expected} cell(s) finished, read in ${(server.indexMs / 1000).toFixed(1)} s`);
      if (index.tasksProblem) console.log(`tasks: ${index.tasksProblem}`);
      console.log(`thumbnails: ${server.images.cacheDir}`);
      console.log(`iwr view: ${server.url}  (read-only; ${options.live ? "following new cells; " : ""}Ctrl-C stops)`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          resolve();
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      await server.close();
    });
}
