/**
 * `npm run bench:queue [-- --ids 1,2,3]`: the same experiment in-process and through the
 * queue (a real redis-server on 127.0.0.1, a coordinator, and worker processes on this
 * machine) with 1 and then 2 evaluation workers. The experiment is the calibration arms
 * (reference, blank, a mutant) on the chosen tasks, so every job is real browser and CPU
 * work and no model is involved.
 *
 * Printed for each: wall time from the command's start to its report (worker start-up
 * included, as the in-process run's start-up is; the workers' shutdown afterwards is not),
 * and how busy the CPUs were. The queue's overhead per job: (queue wall with 1 evaluation worker − in-process wall) / cells, against
 * the in-process wall / cells (a cell is one generation and one evaluation job). BullMQ's
 * own job timestamps are not used: it hands a worker its next job in the same call that
 * finishes the last and stamps both with one time, so the gap between jobs reads 0 by
 * construction.
 *
 * Target: overhead ≤ 5 % of a job's time.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "../scripts/cli-args.ts";
import { taskIdList } from "../src/cli/options.ts";

const { values } = parseScriptArgs({
  name: "bench:queue",
  command: "npm run bench:queue --",
  summary:
    "Runs one calibration experiment in-process and through the queue (a local redis-server, a coordinator, 1 then 2 evaluation workers) " +
    "and prints wall times, the queue's overhead per job and CPU busy share (target: overhead <= 5 % of a job's time). Default ids 1,2,3: ~6 min.",
  options: {
    ids: { type: "string", value: "<1,2,3>", description: "task ids of the bundled suite (default 1,2,3)", parse: (text: string) => taskIdList(text) },
    out: { type: "string", value: "<dir>", description: "where the run folders go (default: a new temporary folder)" },
  },
});

const [{ startCpuMeter }, { startRedisServer }] = await Promise.all([import("./machine-cpu.ts"), import("../test/support/redis-server.ts")]);

const TARGET = 0.05;
const ids = values.ids ?? [1, 2, 3];
const out = path.resolve(values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-queue-")));
const config = path.join(out, "bench-queue.yaml");
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(
  config,
  `tasks:
  file: ${path.resolve("tasks/iwr-mini.jsonl")}
  ids: [${ids.join(", ")}]
concurrency: 1
evaluator:
  judges: offline
arms:
  - name: reference
    kind: reference
  - name: blank
    kind: blank
  - name: frozen
    kind: mutant:freeze-after:1
`,
);
const cells = ids.length * 3;

function iwr(args: string[], env: NodeJS.ProcessEnv): { exited: Promise<number | null>; stop: () => void } {
  const child = spawn(process.execPath, ["bin/iwr.js", "--quiet", ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
  let errors = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  return {
    exited: new Promise((resolve) =>
      child.on("exit", (code) => {
        if (code !== 0 && code !== null) console.error(errors);
        resolve(code);
      }),
    ),
    stop: () => child.kill("SIGTERM"),
  };
}

interface Measured {
  wallSec: number;
  busyShare: number;
  busySec: number;
}

/** Times `run` until it calls `done` (or returns): what follows (workers shutting down) is not the run's time. */
async function measure(run: (done: () => void) => Promise<void>): Promise<Measured> {
  const cpu = startCpuMeter();
  const started = performance.now();
  let measured: Measured | undefined;
  const done = () => {
    const reading = cpu();
    measured ??= { wallSec: (performance.now() - started) / 1000, busyShare: reading.busySeconds / reading.capacitySeconds, busySec: reading.busySeconds };
  };
  await run(done);
  done();
  return measured!;
}

async function main(): Promise<void> {
  const env = { ...process.env, IWR_LOG_LEVEL: "warn" };
  const redis = await startRedisServer();
  try {
    console.log(
      `bench:queue — ${cells} cells (tasks ${ids.join(", ")} × reference, blank, freeze-after:1), ${os.availableParallelism()} cores; folders in ${out}`,
    );
    const inProcess = await measure(async () => {
      const code = await iwr(["run", config, "--out", path.join(out, "in-process")], { ...env, IWR_CACHE_DIR: path.join(out, "cache-in-process") }).exited;
      if (code !== 0) throw new Error(`in-process run exited ${code}`);
    });
    const queued = async (workers: number) => {
      const runDir = path.join(out, `queue-${workers}`);
      const runEnv = { ...env, IWR_CACHE_DIR: path.join(out, `cache-queue-${workers}`) };
      return measure(async (done) => {
        const started = Array.from({ length: workers }, () => iwr(["worker", "--queue", redis.url, "--generate", "1", "--evaluate", "1"], runEnv));
        const code = await iwr(["run", config, "--out", runDir, "--queue", redis.url], runEnv).exited;
        if (code !== 0) throw new Error(`queued run exited ${code}`);
        // The run is over when its report is written; the workers' shutdown (closing their browsers) is not part of it.
        done();
        for (const worker of started) worker.stop();
        await Promise.all(started.map((worker) => worker.exited));
      });
    };
    const one = await queued(1);
    const two = await queued(2);
    const perCell = inProcess.wallSec / cells;
    const overheadPerCell = (one.wallSec - inProcess.wallSec) / cells;
    const busy = (run: Measured) => `CPUs ${(100 * run.busyShare).toFixed(0)} % busy, ${run.busySec.toFixed(1)} cpu-s`;
    console.log(`in-process (concurrency 1):   ${inProcess.wallSec.toFixed(1)} s  (${busy(inProcess)}) → ${perCell.toFixed(2)} s per cell`);
    console.log(`queue, 1 evaluation worker:   ${one.wallSec.toFixed(1)} s  (${busy(one)})`);
    console.log(`queue, 2 evaluation workers:  ${two.wallSec.toFixed(1)} s  (${busy(two)}) → ${(one.wallSec / two.wallSec).toFixed(2)}× the 1-worker queue`);
    const endToEnd = overheadPerCell / perCell;
    console.log(
      `overhead end to end:  ${overheadPerCell >= 0 ? "+" : ""}${overheadPerCell.toFixed(2)} s per cell = ` +
        `${(100 * endToEnd).toFixed(1)} % of a cell's in-process time; target ≤ ${100 * TARGET} %: ${endToEnd <= TARGET ? "met" : "NOT met"}`,
    );
  } finally {
    await redis.stop();
  }
}

await main();
