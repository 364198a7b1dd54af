/**
 * `npm run bench:rerun [-- --ids 1,2]`: the demo experiment cold (its model arms on a
 * local server), then the same run folder again. The warm rerun must make zero model
 * calls and zero replays (no cell is run, no eval.json is written) and take under 5 s;
 * printed beside the cold run's time from the same invocation.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "../scripts/cli-args.ts";
import { taskIdList } from "../src/cli/options.ts";

const { values } = parseScriptArgs({
  name: "bench:rerun",
  command: "npm run bench:rerun --",
  summary:
    "Runs the demo experiment cold (its model arms on a local server), then again in the same run folder: the warm rerun must make no " +
    "model call and no replay and take under 5 s. --ids 1: ~2 min.",
  options: {
    ids: { type: "string", value: "<1,2>", description: "only these task ids (default: the demo config's)", parse: (text: string) => taskIdList(text) },
    out: { type: "string", value: "<dir>", description: "where the run folder and its cache go (default: a new temporary folder)" },
  },
});

// Loaded once the arguments are good, so that --help and a usage error answer at once.
const [{ configureLogger }, { writeReport }, { runExperiment }, { demoConfig, latencyServer }] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/report/report.ts"),
  import("../src/experiment/run.ts"),
  import("./run-support.ts"),
]);

const TARGET_SEC = 5;

function evalWrites(dir: string): Map<string, number> {
  const stamps = new Map<string, number>();
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: "utf8" }))
    if (name.endsWith("eval.json")) stamps.set(name, fs.statSync(path.join(dir, name)).mtimeMs);
  return stamps;
}

async function main(): Promise<void> {
  configureLogger({ level: "warn" });
  const { ids } = values;
  const out = values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-rerun-"));
  process.env.IWR_CACHE_DIR = path.join(out, "cache");
  const probe = demoConfig("http://127.0.0.1:1/v1", out, ids);
  const server = await latencyServer(probe.taskFile, ids?.[0] ?? 1, 0);
  try {
    const runDir = path.join(out, "run");
    const timed = async () => {
      const started = performance.now();
      const summary = await runExperiment(demoConfig(server.baseURL, runDir, ids));
      await writeReport(summary.runDir);
      return { summary, sec: (performance.now() - started) / 1000 };
    };
    const cold = await timed();
    const coldRequests = server.chatRequests().length;
    const before = evalWrites(runDir);
    server.requests.length = 0;
    const warm = await timed();
    const after = evalWrites(runDir);
    const rewritten = [...after].filter(([name, stamp]) => before.get(name) !== stamp).length;
    console.log(`bench:rerun — ${cold.summary.cells.length} cells; run folder ${runDir}`);
    console.log(`cold: ${cold.sec.toFixed(1)} s, ${coldRequests} model request(s), ${cold.summary.ran} cell(s) run`);
    console.log(
      `warm: ${warm.sec.toFixed(2)} s, ${server.chatRequests().length} model request(s), ${warm.summary.ran} cell(s) run, ` +
        `${rewritten} eval.json written (${((warm.sec / cold.sec) * 100).toFixed(1)} % of the cold run)`,
    );
    const met = warm.sec < TARGET_SEC && server.chatRequests().length === 0 && warm.summary.ran === 0 && rewritten === 0;
    console.log(`target: under ${TARGET_SEC} s with no model call and no replay: ${met ? "met" : "NOT met"}`);
  } finally {
    await server.close();
  }
}

await main();
