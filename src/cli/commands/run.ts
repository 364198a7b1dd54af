import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { IwrError } from "../../errors.ts";
import type { RunEvent } from "../../experiment/run.ts";
import { checkOutputFolder } from "../../files/output-folder.ts";
import { exitCodeForRun } from "../exit-codes.ts";
import { positiveInteger } from "../options.ts";
import { exitIfStillRunningAfter, STOP_GRACE_MS } from "../process-guards.ts";

function judgeRepeats(text: string): number {
  const value = positiveInteger(text);
  if (value > 10) throw new InvalidArgumentError(`expected 1 to 10, got ${value}`);
  return value;
}

interface RunCommandOptions {
  out?: string;
  retryErrors?: boolean;
  quiet?: boolean;
  json?: boolean;
  judgeRepeats?: number;
  queue?: string;
  attempts?: number;
  shard?: string;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

/** `iwr run <config.yaml>` and `iwr report <run-dir>` (src/experiment). */
export function registerRunCommand(program: Command): void {
  program
    .command("run")
    .description("run an experiment: every task × arm × repeat of a YAML config, the fixed evaluator on each, then the report")
    .argument("<config>", "experiment config (YAML; see README, Experiments)")
    .option("--out <dir>", "run folder (overrides the config's out)")
    .option("--retry-errors", "run the cells that failed last time again (finished cells are always skipped)")
    .option("--judge-repeats <k>", "judge each assertion k times (1–10) and report the judge's own spread (overrides the config)", judgeRepeats)
    .option("--queue <redis-url>", "queue mode: queue every unfinished cell on this Redis and wait while iwr worker processes do them (README, Scale out)")
    .option("--attempts <n>", "queue mode: tries per job before its cell is recorded as failed (default 3)", positiveInteger)
    .option(
      "--shard <i/n>",
      "run only shard i of n (0-based) of the cells; 'auto' or 'auto/n' reads the index from Slurm or a Kubernetes Indexed Job; combine folders with iwr merge",
    )
    .option("--quiet", "print only the final table")
    .option("--json", "print progress events and the report summary as JSON lines on stdout")
    .action(async (configFile: string, options: RunCommandOptions) => {
      const [{ loadExperimentConfig }, { runExperiment }, { runExperimentOnQueue }, { parseShard }, { writeReport }, { terminalTable, reportLocationLine }] =
        await Promise.all([
          import("../../experiment/config.ts"),
          import("../../experiment/run.ts"),
          import("../../experiment/queue/coordinator.ts"),
          import("../../experiment/shard.ts"),
          import("../../report/report.ts"),
          import("../../report/render-terminal.ts"),
        ]);
      if (options.queue && options.shard) throw new IwrError("CONFIG_INVALID", "--queue and --shard are two ways to spread a run: use one");
      if (options.attempts && !options.queue) throw new IwrError("CONFIG_INVALID", "--attempts applies to queue mode (--queue)");
      // Each shard needs a folder of its own: in one folder, their run.json files would overwrite each other.
      if (options.shard !== undefined && !options.out)
        throw new IwrError(
          "CONFIG_INVALID",
          "--shard needs --out: give each shard its own run folder (e.g. runs/x/shard-$JOB_COMPLETION_INDEX), then iwr merge them",
        );
      const shard = options.shard !== undefined ? parseShard(options.shard) : undefined;
      // `--out ''` is refused, not read as "no --out" (the config's folder would be used without a word).
      if (options.out !== undefined) checkOutputFolder(options.out, "--out");
      const config = loadExperimentConfig(configFile, {
        ...(options.out ? { out: options.out } : {}),
        ...(options.judgeRepeats ? { judgeRepeats: options.judgeRepeats } : {}),
      });
      // First SIGINT/SIGTERM: no new cell starts, agents stop at their next node (checkpoint kept); a second one exits at once.
      const controller = new AbortController();
      // A grace period later, what is still in flight (a model call, an agent's node) is cancelled: those cells stay unfinished.
      const hardStop = new AbortController();
      const onSignal = (signal: NodeJS.Signals) => {
        if (controller.signal.aborted) process.exit(130);
        if (!options.quiet) {
          console.error(
            options.queue
              ? `${signal}: the coordinator stops waiting; queued jobs stay with the workers (run again with --queue to collect them)`
              : `${signal}: stopping: no new cell starts; the ones in progress finish or stop at a checkpoint, ` +
                  `a model call still running in ${STOP_GRACE_MS / 1000} s is cancelled (run again to resume)`,
          );
        }
        controller.abort();
        setTimeout(() => hardStop.abort(), STOP_GRACE_MS).unref();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      try {
        const onEvent = (event: RunEvent) => {
          if (options.json) {
            console.log(
              JSON.stringify(
                event.type === "cell"
                  ? {
                      type: "cell",
                      arm: event.record.arm,
                      repeat: event.record.repeat,
                      taskId: event.record.taskId,
                      status: event.record.status,
                      final: event.record.evaluation.final,
                      done: event.done,
                      pending: event.pending,
                      failed: event.failed,
                      costUsd: event.costUsd,
                      tokens: event.tokens,
                    }
                  : event,
              ),
            );
            return;
          }
          if (options.quiet) return;
          if (event.type === "start") {
            console.error(
              `${config.name}: ${event.cells} cell(s), ${event.pending} to run, ${event.cells - event.pending} finished already; run folder ${event.runDir}`,
            );
            return;
          }
          const { record } = event;
          const eta = event.done < event.pending ? `, ETA ${seconds((event.elapsedMs / event.done) * (event.pending - event.done))}` : "";
          const score = record.evaluation.final !== undefined ? `Final ${(record.evaluation.final * 100).toFixed(1)} %` : "not scored";
          const failure = record.error ? ` — ${record.error.stage} failed: ${record.error.code}: ${record.error.message.slice(0, 160)}` : "";
          console.error(
            `[${event.done}/${event.pending}] ${record.arm} r${record.repeat} task ${record.taskId}: ${score}${failure} ` +
              `(${event.failed} failed, ${event.tokens} tokens, $${event.costUsd.toFixed(4)}${eta})`,
          );
        };
        const common = { retryErrors: options.retryErrors === true, signal: controller.signal, onEvent };
        const summary = options.queue
          ? await runExperimentOnQueue(config, {
              ...common,
              queueUrl: options.queue,
              ...(options.attempts ? { attempts: options.attempts } : {}),
              say: (line) => void (options.quiet || options.json || console.error(line)),
            })
          : await runExperiment(config, { ...common, hardStop: hardStop.signal, ...(shard ? { shard } : {}) });
        if (shard && !options.quiet && !options.json)
          console.error(
            `shard ${shard.index}/${shard.count}: ${summary.cells.length} of its cells done; combine the shards' folders with iwr merge <dirs...> --out <dir>`,
          );
        const { data, files, htmlBytes } = await writeReport(summary.runDir);
        if (options.json)
          console.log(
            JSON.stringify({ type: "report", report: files.reportJson, html: files.reportHtml, htmlBytes, arms: data.arms, comparison: data.comparison }),
          );
        else {
          console.log(`\n${terminalTable(data)}\n`);
          console.log(reportLocationLine(files.reportHtml, htmlBytes, summary.runDir));
          if (summary.failed > 0) console.log(`${summary.failed} cell(s) failed (see report.md); iwr run ${configFile} --retry-errors runs them again`);
          if (summary.unfinished > 0)
            console.log(`${summary.unfinished} cell(s) unfinished (the run was stopped): the report covers the others; iwr run ${configFile} runs the rest`);
        }
        process.exitCode = exitCodeForRun(summary.failed + summary.unfinished);
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        if (options.queue) exitIfStillRunningAfter(2_000);
      }
    });

  program
    .command("merge")
    .description("combine the folders of a sharded run (iwr run --shard i/n) into one run folder, then write its report")
    .argument("<dirs...>", "run folders made by iwr run --shard of one config")
    .requiredOption("--out <dir>", "the merged run folder")
    .action(async (dirs: string[], options: { out: string }) => {
      const [{ mergeRuns }, { writeReport }, { terminalTable, reportLocationLine }] = await Promise.all([
        import("../../experiment/merge.ts"),
        import("../../report/report.ts"),
        import("../../report/render-terminal.ts"),
      ]);
      checkOutputFolder(options.out, "--out");
      const { lockFolder } = await import("../../files/folder-lock.ts");
      const { RUN_LOCK } = await import("../../results/layout.ts");
      const lock = lockFolder(options.out, { name: RUN_LOCK, command: "iwr merge", what: "merged run folder" });
      let merged: ReturnType<typeof mergeRuns>;
      let report: Awaited<ReturnType<typeof writeReport>>;
      try {
        merged = mergeRuns(dirs, options.out);
        report = await writeReport(merged.out);
      } finally {
        lock.release();
      }
      const { data, files, htmlBytes } = report;
      console.log(`${terminalTable(data)}\n`);
      console.log(
        `merged ${dirs.length} folder(s) into ${merged.out}: ${merged.copied} cell(s) copied, ${merged.kept} already there, ` +
          `${merged.cells - merged.missing} of ${merged.cells} present`,
      );
      if (merged.missing > 0)
        console.log(`${merged.missing} cell(s) of the run are in no folder yet (a shard not run or not finished): merge again when they are`);
      console.log(reportLocationLine(files.reportHtml, htmlBytes, merged.out));
      process.exitCode = exitCodeForRun(merged.missing);
    });

  program
    .command("report")
    .description("rebuild an experiment's report (report.json, report.md, report.html) from its run folder")
    .argument("<run-dir>", "a folder made by iwr run")
    .option("--compare <arms>", "the two arms of the paired difference, as a,b (default: the config's, else the first two)")
    .action(async (runDir: string, options: { compare?: string }) => {
      const [{ writeReport }, { terminalTable, reportLocationLine }] = await Promise.all([
        import("../../report/report.ts"),
        import("../../report/render-terminal.ts"),
      ]);
      const compare = options.compare?.split(",").map((name) => name.trim());
      if (compare && compare.length !== 2) throw new Error(`--compare: expected two arm names as a,b, got '${options.compare}'`);
      const { data, files, htmlBytes } = await writeReport(runDir, compare ? { compare: [compare[0]!, compare[1]!] } : {});
      console.log(`${terminalTable(data)}\n\n${reportLocationLine(files.reportHtml, htmlBytes, runDir)}`);
      // A record that could not be read is a failed cell in the report (each named in a warning above).
      const damaged = data.cells.filter((cell) => cell.damaged !== undefined).length;
      if (damaged > 0) console.log(`${damaged} cell(s) have a damaged or missing record and count as failed; iwr run on the config recomputes them`);
      process.exitCode = exitCodeForRun(damaged);
    });
}
