/**
 * `npm run tasks:build [-- <script-name>...]`: re-records the bundled suite.
 *
 * With no names, every tasks/scripts/*.yaml is recorded into a fresh build folder,
 * the result is validated (media probed), and only then does it replace
 * tasks/iwr-mini.jsonl and tasks/iwr-mini/ — a failed build leaves the committed suite
 * as it was. With names (`shop`, `faq.yaml`), only those tasks are re-recorded in place.
 *
 * Ids: every script declares `id:` (used as is), or none does (ids follow the sorted
 * file names, 1, 2, ...). A mix is refused, so ids never shift between rebuilds.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { errorMessage, IwrError } from "../src/errors.ts";
import { type LoadedActionScript, loadActionScript } from "../src/recorder/script-schema.ts";
import { exitWithUsageError, parseScriptArgs } from "./cli-args.ts";

const TASKS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "tasks");
const SCRIPTS_DIR = path.join(TASKS_DIR, "scripts");
const SUITE_NAME = "iwr-mini";

interface PlannedTask {
  readonly id: number;
  readonly loaded: LoadedActionScript;
}

/** Every script with its id, in id order. */
export function planSuite(scriptsDir: string): PlannedTask[] {
  const files = fs
    .readdirSync(scriptsDir)
    .filter((name) => /\.ya?ml$/i.test(name))
    .sort();
  if (files.length === 0) throw new IwrError("RECORDER", `no action scripts (*.yaml) in ${scriptsDir}`);
  const scripts = files.map((name) => loadActionScript(path.join(scriptsDir, name)));
  const declared = scripts.filter((loaded) => loaded.script.id !== undefined);
  if (declared.length !== 0 && declared.length !== scripts.length) {
    const missing = scripts.filter((loaded) => loaded.script.id === undefined).map((loaded) => path.basename(loaded.file));
    throw new IwrError("RECORDER", `either every script declares id: or none does; missing in ${missing.join(", ")}`);
  }
  const planned = scripts.map((loaded, index) => ({ id: loaded.script.id ?? index + 1, loaded }));
  const seen = new Map<number, string>();
  for (const { id, loaded } of planned) {
    const other = seen.get(id);
    if (other) throw new IwrError("RECORDER", `id ${id} is declared by both ${other} and ${path.basename(loaded.file)}`);
    seen.set(id, path.basename(loaded.file));
  }
  return planned.sort((a, b) => a.id - b.id);
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : fs.statSync(full).size;
  }
  return total;
}

async function recordAll(planned: readonly PlannedTask[], jsonl: string, force: boolean): Promise<void> {
  const { recordTask } = await import("../src/recorder/record-task.ts");
  for (const [index, { id, loaded }] of planned.entries()) {
    const result = await recordTask({ script: loaded, data: jsonl, id, force });
    console.log(
      `[${index + 1}/${planned.length}] ${path.basename(loaded.file)} -> task ${id}: ${result.line.action_sequence.length} actions, ` +
        `${result.assets.length} assets, ${result.videoSec.toFixed(1)} s video, ${(result.timings.totalMs / 1000).toFixed(1)} s` +
        (result.warnings.length > 0 ? `\n    warnings: ${result.warnings.join("\n              ")}` : ""),
    );
  }
}

async function validateSuite(jsonl: string): Promise<void> {
  const [{ loadTaskSet }, { formatProblem }] = await Promise.all([import("../src/tasks/loader.ts"), import("../src/tasks/problems.ts")]);
  const set = await loadTaskSet(jsonl, { checkMedia: true });
  if (set.problems.length > 0) {
    throw new IwrError("TASK_INVALID", `the rebuilt suite does not validate:\n  ${set.problems.map(formatProblem).join("\n  ")}`);
  }
}

/** Replaces the committed suite with the build's, folder first, jsonl last. */
function swapInto(buildDir: string, finalJsonl: string, finalDir: string): void {
  const retired = `${finalDir}.retired-${process.pid}`;
  if (fs.existsSync(finalDir)) fs.renameSync(finalDir, retired);
  fs.renameSync(path.join(buildDir, SUITE_NAME), finalDir);
  fs.renameSync(path.join(buildDir, `${SUITE_NAME}.jsonl`), finalJsonl);
  fs.rmSync(retired, { recursive: true, force: true });
}

async function main(names: readonly string[]): Promise<void> {
  const started = Date.now();
  const finalJsonl = path.join(TASKS_DIR, `${SUITE_NAME}.jsonl`);
  const finalDir = path.join(TASKS_DIR, SUITE_NAME);
  const planned = planSuite(SCRIPTS_DIR);
  if (names.length > 0) {
    const wanted = names.map((name) => name.replace(/\.ya?ml$/i, ""));
    const chosen = planned.filter(({ loaded }) => wanted.includes(path.basename(loaded.file).replace(/\.ya?ml$/i, "")));
    await recordAll(chosen, finalJsonl, true);
    await validateSuite(finalJsonl);
  } else {
    const buildDir = fs.mkdtempSync(path.join(TASKS_DIR, ".build-"));
    try {
      const buildJsonl = path.join(buildDir, `${SUITE_NAME}.jsonl`);
      await recordAll(planned, buildJsonl, false);
      await validateSuite(buildJsonl);
      swapInto(buildDir, finalJsonl, finalDir);
    } finally {
      fs.rmSync(buildDir, { recursive: true, force: true });
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const megabytes = folderBytes(finalDir) / 1024 / 1024;
  console.log(
    `suite ${path.relative(process.cwd(), finalJsonl)}: ${planned.length} tasks valid; built in ${seconds.toFixed(1)} s; media ${megabytes.toFixed(2)} MB`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const spec = {
    name: "tasks:build",
    command: "npm run tasks:build --",
    summary:
      "Re-records the bundled suite from tasks/scripts/*.yaml. With no names: every script into a fresh build folder, validated, " +
      "then swapped in for tasks/iwr-mini.jsonl and tasks/iwr-mini/ (a failed build leaves the committed suite as it was). " +
      "With names: only those tasks, re-recorded in place.",
    options: {},
    positionals: { usage: "[<script-name>...]", description: "scripts to re-record, e.g. shop or faq.yaml (default: every script, a full rebuild)" },
  };
  const { positionals: names } = parseScriptArgs(spec);
  const known = fs
    .readdirSync(SCRIPTS_DIR)
    .filter((name) => /\.ya?ml$/i.test(name))
    .map((name) => name.replace(/\.ya?ml$/i, ""));
  const unknown = names.filter((name) => !known.includes(name.replace(/\.ya?ml$/i, "")));
  if (unknown.length > 0)
    exitWithUsageError(spec, `no script named ${unknown.join(", ")} in ${path.relative(process.cwd(), SCRIPTS_DIR) || "."} (there are ${known.join(", ")})`);
  // Loaded only for a real build: --help and a usage error never load the browser's modules.
  const { closeSharedBrowser } = await import("../src/browser/launch.ts");
  try {
    await main(names);
  } catch (error) {
    console.error(`tasks:build: ${error instanceof IwrError ? `${error.code}: ` : ""}${errorMessage(error)}`);
    process.exitCode = 1;
  } finally {
    await closeSharedBrowser();
  }
}
