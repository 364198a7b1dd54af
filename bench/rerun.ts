/**
 * `npm run bench:rerun [-- --ids 1,2]`: the main job as `npm start` runs it (`node
 * bin/iwr.js start`, a process of its own: start-up, the setup check, the suite's
 * validation, the plan, every cell's key, the report), cold and then again in the same
 * run folder, its model arms on a local server. The warm rerun must make zero model calls
 * and zero replays (no cell is run, no eval.json is written), print the same table, and
 * take under 5 s. Printed beside the cold run's time and a floor measured in the same
 * run: the same command's own start-up (`node bin/iwr.js --help`), which no rerun can beat.
 * Caches (responses, image readings, video states, media checks) start empty in the
 * bench's folder, as on a fresh clone.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseDocument } from "yaml";
import { parseScriptArgs } from "../scripts/cli-args.ts";
import { taskIdList } from "../src/cli/options.ts";

const { values } = parseScriptArgs({
  name: "bench:rerun",
  command: "npm run bench:rerun --",
  summary:
    "Runs the main job (node bin/iwr.js start, its model arms on a local server) cold, then again in the same run folder: the warm rerun " +
    "must make no model call and no replay, print the same table and take under 5 s. --ids 1: ~2 min; all tasks: ~10 min.",
  options: {
    ids: { type: "string", value: "<1,2>", description: "only these task ids (default: the demo config's)", parse: (text: string) => taskIdList(text) },
    out: { type: "string", value: "<dir>", description: "where the run folder and its caches go (default: a new temporary folder)" },
  },
});

// Loaded once the arguments are good, so that --help and a usage error answer at once.
const [{ DEMO, latencyServer }] = await Promise.all([import("./run-support.ts")]);

const TARGET_SEC = 5;
const IWR = path.resolve("bin", "iwr.js");

function evalWrites(dir: string): Map<string, number> {
  const stamps = new Map<string, number>();
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: "utf8" }))
    if (name.endsWith("eval.json")) stamps.set(name, fs.statSync(path.join(dir, name)).mtimeMs);
  return stamps;
}

/** The demo config with absolute paths into `out`, restricted to `ids`. */
function writeConfig(out: string, runDir: string, ids: number[] | undefined): string {
  const document = parseDocument(fs.readFileSync(DEMO, "utf8"));
  document.setIn(["tasks", "file"], path.resolve(path.dirname(DEMO), String(document.getIn(["tasks", "file"]))));
  if (ids) document.setIn(["tasks", "ids"], ids);
  document.set("out", runDir);
  const file = path.join(out, "demo.yaml");
  fs.writeFileSync(file, document.toString());
  return file;
}

interface Timed {
  sec: number;
  stdout: string;
  code: number;
}

function timedIwr(args: string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [IWR, ...args], { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ sec: (performance.now() - started) / 1000, stdout, code });
    });
  });
}

/** The table `iwr start` prints (from its first line with "Final" to the line before "report:"), without the timing lines. */
function printedTable(stdout: string): string {
  const lines = stdout.split("\n");
  const first = lines.findIndex((line) => /\bFinal\b/.test(line) && !line.includes("task "));
  const last = lines.findIndex((line) => line.startsWith("report: "));
  return lines
    .slice(Math.max(0, first), last < 0 ? undefined : last)
    .filter((line) => !line.startsWith("image readings:"))
    .join("\n")
    .trim();
}

async function main(): Promise<number> {
  const { ids } = values;
  const out = path.resolve(values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-rerun-")));
  const runDir = path.join(out, "run");
  const taskFile = path.resolve("tasks", "iwr-mini.jsonl");
  const server = await latencyServer(taskFile, ids?.[0] ?? 1, 0);
  try {
    const config = writeConfig(out, runDir, ids);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      IWR_MODEL: "gpt-4o",
      IWR_BASE_URL: server.baseURL,
      IWR_CACHE_DIR: path.join(out, "cache"),
      IWR_READINGS_CACHE_DIR: path.join(out, "image-readings"),
      IWR_STATES_CACHE_DIR: path.join(out, "video-states"),
      IWR_MEDIA_CHECKS_DIR: path.join(out, "media-checks"),
    };
    const start = ["start", "--config", config];
    const floor = await timedIwr(["--help"], env);
    const cold = await timedIwr(start, env);
    const coldRequests = server.chatRequests().length;
    const before = evalWrites(runDir);
    server.requests.length = 0;
    const warm = await timedIwr(start, env);
    const after = evalWrites(runDir);
    const rewritten = [...after].filter(([name, stamp]) => before.get(name) !== stamp).length;
    const ran = /(\d+) cell\(s\): (\d+) to run/.exec(warm.stdout);
    const warmRan = ran ? Number(ran[2]) : Number.NaN;
    const sameTable = printedTable(cold.stdout) === printedTable(warm.stdout) && printedTable(warm.stdout).length > 0;
    console.log(`bench:rerun — ${ran?.[1] ?? "?"} cells; run folder ${runDir}; exit codes cold ${cold.code}, warm ${warm.code}`);
    console.log(`floor: \`iwr --help\` (process, TypeScript loader, command line) ${floor.sec.toFixed(2)} s`);
    const readings = cold.stdout.split("\n").find((line) => line.startsWith("image readings:"));
    console.log(`cold: ${cold.sec.toFixed(1)} s, ${coldRequests} model request(s)${readings ? `; ${readings}` : ""}`);
    console.log(
      `warm: ${warm.sec.toFixed(2)} s = ${(warm.sec / floor.sec).toFixed(1)} × the floor (${((warm.sec / cold.sec) * 100).toFixed(1)} % of the cold run); ` +
        `${server.chatRequests().length} model request(s), ${warmRan} cell(s) run, ${rewritten} eval.json written, ` +
        `${sameTable ? "the same table" : "a DIFFERENT table"}`,
    );
    const met = warm.sec < TARGET_SEC && server.chatRequests().length === 0 && warmRan === 0 && rewritten === 0 && sameTable;
    console.log(`target: under ${TARGET_SEC} s with no model call, no replay and the same table: ${met ? "met" : "NOT met"}`);
    if (!sameTable) console.log(`cold table:\n${printedTable(cold.stdout)}\nwarm table:\n${printedTable(warm.stdout)}`);
    return 0;
  } finally {
    await server.close();
  }
}

process.exitCode = await main();
