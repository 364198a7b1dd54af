/**
 * `npm run synthesize:run -- --from <run dir> --out <dir> [--cells 4000] [--tasks 100] [--repeats 3]`
 *
 * A run folder at benchmark scale made from a real one, to measure `iwr view` and
 * report.html on thousands of cells: the source run's cells are copied and renamed into
 * `--tasks` tasks × the source's arms (each copied under new names, `<arm>-v<k>`, as often as
 * needed) × `--repeats` repeats, until `--cells` cells exist. The source's tasks are copied
 * into a task file of the output's own (tasks/synthetic.jsonl, task t a copy of source task
 * t mod n, its folder hard-linked), run.json names the new arms, cells and task file.
 *
 * Record files (*.json) are rewritten: every path naming the source cell's folder or its
 * task's folder names the copy's, and cell.json gets its new arm, repeat, task and key.
 * Everything else (screenshots, traces, pages, the agent's store) is hard-linked, or copied
 * where a link cannot be made. The scores are the source cells' own: the output measures
 * tools, not models. The source folder is only read.
 */
import fs from "node:fs";
import path from "node:path";
import { positiveInteger } from "../src/cli/options.ts";
import { sha256Hex } from "../src/files/content-hash.ts";
import { parseScriptArgs } from "./cli-args.ts";

const { values: chosen } = parseScriptArgs({
  name: "synthesize:run",
  command: "npm run synthesize:run --",
  summary:
    "Makes a run folder of --cells cells from a real run folder's cells (copied and renamed into more tasks, arms and repeats), " +
    "with its own task file, to measure iwr view and report.html at benchmark scale. The source folder is only read.",
  options: {
    from: { type: "string", value: "<run dir>", description: "a run folder made by iwr run (it holds run.json)" },
    out: { type: "string", value: "<dir>", description: "the new run folder (must not exist yet)" },
    cells: { type: "string", value: "<n>", description: "cells to make", default: "4000", parse: positiveInteger },
    tasks: { type: "string", value: "<n>", description: "tasks to spread them over", default: "100", parse: positiveInteger },
    repeats: { type: "string", value: "<n>", description: "repeats per arm and task", default: "3", parse: positiveInteger },
  },
});

interface RunJson {
  name: string;
  tasks: { file: string };
  arms: Array<{ name: string; kind: string }>;
  cells?: string[];
  [key: string]: unknown;
}

function fail(message: string): never {
  console.error(`synthesize:run: ${message}`);
  process.exit(2);
}

const fromDir = chosen.from ? path.resolve(chosen.from) : fail("--from is required");
const outDir = chosen.out ? path.resolve(chosen.out) : fail("--out is required");
if (!fs.existsSync(path.join(fromDir, "run.json"))) fail(`--from: ${fromDir} has no run.json (not a run folder)`);
if (fs.existsSync(outDir)) fail(`--out: ${outDir} exists already; name a new folder`);

const run = JSON.parse(fs.readFileSync(path.join(fromDir, "run.json"), "utf8")) as RunJson;
const sourceTaskFile = path.resolve(run.tasks.file);
const sourceTaskDir = path.join(path.dirname(sourceTaskFile), path.basename(sourceTaskFile, path.extname(sourceTaskFile)));
const sourceLines = new Map<number, Record<string, unknown>>();
for (const line of fs.readFileSync(sourceTaskFile, "utf8").split("\n")) {
  if (line.trim() === "") continue;
  const parsed = JSON.parse(line) as Record<string, unknown>;
  sourceLines.set(Number(parsed.id), parsed);
}

/** Source cells by arm, then task id: the folder of repeat 0 (or the first repeat found). */
const sourceCells = new Map<string, Map<number, string>>();
for (const arm of run.arms) {
  const byTask = new Map<number, string>();
  const armDir = path.join(fromDir, "arms", arm.name);
  const repeats = fs.existsSync(armDir) ? fs.readdirSync(armDir).sort() : [];
  for (const repeat of repeats)
    for (const task of fs.readdirSync(path.join(armDir, repeat))) {
      if (byTask.has(Number(task))) continue;
      for (const folder of fs.readdirSync(path.join(armDir, repeat, task))) {
        const dir = path.join(armDir, repeat, task, folder);
        if (fs.existsSync(path.join(dir, "cell.json"))) byTask.set(Number(task), dir);
      }
    }
  if (byTask.size > 0) sourceCells.set(arm.name, byTask);
}
const sourceArms = run.arms.filter((arm) => sourceCells.has(arm.name));
const sourceTaskIds = [...sourceLines.keys()].filter((id) => sourceArms.some((arm) => sourceCells.get(arm.name)!.has(id))).sort((a, b) => a - b);
if (sourceArms.length === 0 || sourceTaskIds.length === 0) fail(`--from: ${fromDir} has no finished cell`);

/** Hard link, or copy where the file system will not link. */
function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

function copyTree(from: string, to: string, rewriteJson: (text: string, name: string) => string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target, rewriteJson);
    else if (entry.isFile() && entry.name.endsWith(".json")) fs.writeFileSync(target, rewriteJson(fs.readFileSync(source, "utf8"), entry.name));
    else if (entry.isFile()) linkOrCopy(source, target);
  }
}

const started = Date.now();
const taskCount = chosen.tasks;
const repeats = chosen.repeats;
const copiesPerArm = Math.ceil(chosen.cells / (taskCount * repeats * sourceArms.length));
const outTaskFile = path.join(outDir, "tasks", "synthetic.jsonl");
const outTaskDir = path.join(outDir, "tasks", "synthetic");
const sourceOf = (taskId: number) => sourceTaskIds[(taskId - 1) % sourceTaskIds.length]!;

// The tasks: line t is source task (t − 1) mod n with id t; its folder hard-linked.
fs.mkdirSync(outTaskDir, { recursive: true });
const lines: string[] = [];
for (let taskId = 1; taskId <= taskCount; taskId++) {
  const source = sourceOf(taskId);
  lines.push(JSON.stringify({ ...sourceLines.get(source)!, id: taskId }));
  copyTree(path.join(sourceTaskDir, String(source)), path.join(outTaskDir, String(taskId)), (text) => text);
}
fs.writeFileSync(outTaskFile, `${lines.join("\n")}\n`);

// The cells: arm copies × repeats × tasks, in that order, until --cells.
const arms: Array<{ name: string; kind: string }> = [];
const cellKeys: string[] = [];
let made = 0;
outer: for (let copy = 0; copy < copiesPerArm; copy++) {
  for (const arm of sourceArms) {
    const name = copy === 0 ? arm.name : `${arm.name}-v${copy}`;
    arms.push({ ...arm, name });
    for (let repeat = 0; repeat < repeats; repeat++) {
      for (let taskId = 1; taskId <= taskCount; taskId++) {
        if (made >= chosen.cells) break outer;
        const byTask = sourceCells.get(arm.name)!;
        const sourceTask = byTask.has(sourceOf(taskId)) ? sourceOf(taskId) : [...byTask.keys()][0]!;
        const from = byTask.get(sourceTask)!;
        const to = path.join(outDir, "arms", name, `repeat-${repeat}`, String(taskId), path.basename(from));
        const cellKey = sha256Hex(`${name}\u0000${repeat}\u0000${taskId}`).slice(0, 24);
        const fromTask = path.join(sourceTaskDir, String(sourceTask));
        const toTask = path.join(outTaskDir, String(taskId));
        copyTree(from, to, (text, fileName) => {
          // Paths first (a task folder's path is a prefix of nothing in a cell's, and vice versa), then the cell's identity.
          const moved = text.split(`${from}/`).join(`${to}/`).split(`${from}"`).join(`${to}"`).split(`${fromTask}/`).join(`${toTask}/`);
          const record = JSON.parse(moved) as Record<string, unknown>;
          if (typeof record.taskId === "number") record.taskId = taskId;
          if (fileName === "cell.json") Object.assign(record, { arm: name, repeat, cellKey });
          return `${JSON.stringify(record, null, 2)}\n`;
        });
        cellKeys.push(cellKey);
        made++;
      }
    }
  }
}

const runKey = sha256Hex(cellKeys.join(","));
fs.writeFileSync(
  path.join(outDir, "run.json"),
  `${JSON.stringify({ ...run, name: `${run.name}-x${made}`, tasks: { ...run.tasks, file: outTaskFile }, arms, cells: cellKeys, runKey }, null, 2)}\n`,
);
console.log(
  `${outDir}: ${made} cells (${arms.length} arms × ${repeats} repeats × ${taskCount} tasks) from ${fromDir}'s ` +
    `${sourceArms.length} arms × ${sourceTaskIds.length} tasks in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
