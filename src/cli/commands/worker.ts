import type { Command } from "commander";
import { EXIT_CODES } from "../exit-codes.ts";
import { positiveInteger } from "../options.ts";
import { exitIfStillRunningAfter, STOP_GRACE_MS } from "../process-guards.ts";

interface WorkerCommandOptions {
  queue: string;
  generate: number;
  evaluate: number;
  stallMs: number;
}

/** `iwr worker --queue <redis-url>`: takes the jobs `iwr run --queue` queues (src/experiment/queue). */
export function registerWorkerCommand(program: Command): void {
  program
    .command("worker")
    .description(
      "queue mode: take experiment jobs from Redis (queued by iwr run --queue) until stopped (SIGINT/SIGTERM); " +
        "needs the run folder and the config at the coordinator's paths",
    )
    .requiredOption("--queue <redis-url>", "the coordinator's Redis, e.g. redis://10.0.0.5:6379")
    .option("--generate <n>", "generation jobs at once (model-bound)", positiveInteger, 2)
    .option("--evaluate <n>", "evaluation jobs at once (each replays a page in its own browser context)", positiveInteger, 1)
    .option("--stall-ms <ms>", "how long a job stays locked to a silent worker before another takes it up (BullMQ lockDuration)", positiveInteger, 30_000)
    .action(async (options: WorkerCommandOptions) => {
      const { QueueWorker } = await import("../../experiment/queue/worker.ts");
      const worker = new QueueWorker({
        queueUrl: options.queue,
        generate: options.generate,
        evaluate: options.evaluate,
        stallMs: options.stallMs,
        say: (line) => console.error(line),
        stopGraceMs: STOP_GRACE_MS,
      });
      const onSignal = (signal: NodeJS.Signals) => {
        console.error(
          `${signal}: the worker stops taking jobs; the ones in progress finish (while Redis is unreachable, within ${STOP_GRACE_MS / 1000} s; ` +
            "a second signal exits at once, and their jobs are taken up again elsewhere)",
        );
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        process.on("SIGINT", () => process.exit(130));
        process.on("SIGTERM", () => process.exit(143));
        worker.stop();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      try {
        const stop = await worker.run();
        if (stop.reason === "refused") {
          console.error(`worker: refused: ${stop.message}`);
          process.exitCode = EXIT_CODES.usage;
        }
      } finally {
        exitIfStillRunningAfter(2_000);
      }
    });
}
