/**
 * `npm run bench:memory [-- --workers 1,2,4]`: the peak memory of an evaluation with
 * N workers, over the bundled suite's true pages and the hostile corpus, against the
 * bound the page memory limit promises: N × the limit plus what the process and the
 * browser hold on their own (measured in the same run, from an evaluation of the true
 * pages alone).
 *
 * Memory is the proportional set size (PSS, /proc/<pid>/smaps_rollup) summed over this
 * process and all its descendants (Chromium's processes, Tesseract's threads live in
 * this process), read every 200 ms: shared pages are counted once, not per process.
 * Linux only.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { existingTaskFile, parseScriptArgs, positiveIntegerList } from "../scripts/cli-args.ts";

const { values } = parseScriptArgs({
  name: "bench:memory",
  command: "npm run bench:memory --",
  summary:
    "Peak memory (PSS of this process and its descendants) of an evaluation with N workers over the suite's true pages and the hostile " +
    "corpus, against N x the page memory limit plus what the process holds on its own. Linux only.",
  options: {
    workers: {
      type: "string",
      value: "<1,2,4>",
      description: "the worker counts to measure, one evaluation pair each",
      default: "1,2,4",
      parse: positiveIntegerList,
    },
    data: { type: "string", value: "<tasks.jsonl>", description: "the task file", default: "tasks/iwr-mini.jsonl", parse: existingTaskFile },
  },
});

// Loaded once the arguments are good, so that --help and a usage error answer at once.
const [{ configureLogger }, { defaultPageMemoryLimitMiB }, { loadTasks }, { runEvaluation }, { writeCalibrationCandidate }] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/browser/host.ts"),
  import("../src/tasks/loader.ts"),
  import("../src/run/evaluate.ts"),
  import("../src/calibration/calibration.ts"),
]);

const HOSTILE_DIR = path.resolve("test/fixtures/hostile");
/** The hostile pages put in place of six tasks' true pages. */
const HOSTILE = ["arraybuffer-bomb.html", "canvas-bomb.html", "request-flood.html", "infinite-loop.html", "alert-loop.html", "huge-dom.html"];

/** Children started by any of the process's threads: Chromium starts its network service from a thread other than its main one. */
function children(pid: number): number[] {
  let threads: string[];
  try {
    threads = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // exited meanwhile
  }
  return threads.flatMap((thread) => {
    try {
      return fs.readFileSync(`/proc/${pid}/task/${thread}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

function pssMiB(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** PSS of this process and every descendant, in MiB. */
function treeMiB(): number {
  let total = 0;
  const pending = [process.pid];
  while (pending.length > 0) {
    const pid = pending.pop() ?? 0;
    total += pssMiB(pid);
    pending.push(...children(pid));
  }
  return total;
}

async function peakDuring(work: () => Promise<unknown>): Promise<{ peakMiB: number; seconds: number }> {
  let peak = treeMiB();
  const timer = setInterval(() => {
    peak = Math.max(peak, treeMiB());
  }, 200);
  const started = Date.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return { peakMiB: Math.max(peak, treeMiB()), seconds: (Date.now() - started) / 1000 };
}

async function main(): Promise<void> {
  if (!fs.existsSync("/proc/self/smaps_rollup")) throw new Error("bench:memory reads /proc/<pid>/smaps_rollup: Linux only");
  configureLogger({ level: "error" });
  const dataPath = values.data;
  const tasks = await loadTasks(dataPath);
  const counts = values.workers;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-memory-"));
  console.log(
    `bench:memory — ${tasks.length} tasks; ${os.cpus().length} CPU(s), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; ` +
      `PSS of this process and its descendants every 200 ms`,
  );
  console.log(
    "| workers | page limit (MiB) | true pages only: peak | true + hostile: peak | bound N × limit + own | within | hostile pages stopped | wall (s) |",
  );
  console.log("|---:|---:|---:|---:|---:|:---:|---|---:|");
  try {
    for (const workers of counts) {
      const limit = defaultPageMemoryLimitMiB(workers);
      const run = async (name: string, hostile: boolean) => {
        const resultDir = path.join(dir, `${name}-${workers}`);
        for (const [position, task] of tasks.entries()) {
          const folder = writeCalibrationCandidate(task, resultDir, "reference");
          // Every other task gets a hostile page instead of its true one.
          const file = hostile && position % 2 === 0 ? HOSTILE[position / 2] : undefined;
          if (file) fs.copyFileSync(path.join(HOSTILE_DIR, file), path.join(folder, "index.html"));
        }
        let outcomes: Awaited<ReturnType<typeof runEvaluation>> | undefined;
        const peak = await peakDuring(async () => {
          outcomes = await runEvaluation({
            dataPath,
            resultDir,
            model: "reference",
            judge: "heuristic",
            grounding: "heuristic",
            pairing: "aligned",
            workers,
            pageMemoryMiB: limit,
            trace: false,
          });
        });
        return { ...peak, outcomes };
      };
      const alone = await run("true", false);
      const mixed = await run("mixed", true);
      const own = alone.peakMiB;
      const bound = workers * limit + own;
      const stopped = mixed.outcomes?.tasks.filter((task) => task.status !== "failed").length ?? 0;
      console.log(
        `| ${workers} | ${limit} | ${alone.peakMiB.toFixed(0)} | ${mixed.peakMiB.toFixed(0)} | ${bound.toFixed(0)} | ` +
          `${mixed.peakMiB <= bound ? "yes" : "NO"} | ${stopped} of ${tasks.length} evaluated | ${(alone.seconds + mixed.seconds).toFixed(0)} |`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
