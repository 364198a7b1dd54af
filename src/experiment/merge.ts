/**
 * `iwr merge <dirs...> --out <dir>`: puts the folders of a sharded run (`iwr run --shard
 * i/n`) together into one run folder, as if the run had been made in one piece.
 *
 * Only folders of the same run merge: each run.json's run key (the hash of the config's
 * text and of every cell key, plan.ts) must be the same, so folders made with another
 * config, other tasks or other model settings are refused, naming both. The merge goes
 * cell by cell: each cell whose cell.json carries one of its folder's cell keys is copied
 * with its whole candidate folder (page, eval.json, evalpoints, the agent's drafts); a
 * cell present in two folders is taken finished over failed, else from the first. A cell
 * already in `--out` is left as it is unless it failed and a finished copy has come (a
 * shard rerun with --retry-errors), so merging again after a late shard only adds. Each cell
 * folder is copied beside its place and renamed into it, so an interrupted merge leaves
 * no half cell.
 */
import fs from "node:fs";
import path from "node:path";
import { errorMessage, IwrError } from "../errors.ts";
import { tempPathBeside, writeFileAtomicSync } from "../files/atomic.ts";
import { readCellRecord } from "../results/cell-record.ts";
import { RESULT_FILES, runFiles } from "../results/layout.ts";

interface RunRecordOnDisk {
  runKey?: string;
  name?: string;
  config?: { file?: string; sha256?: string };
  cells?: string[];
  allCells?: string[];
  shard?: { index: number; count: number };
  [key: string]: unknown;
}

export interface MergeSummary {
  out: string;
  /** Cells copied by this merge. */
  copied: number;
  /** Cells already in the output. */
  kept: number;
  /** Cells of the run that no folder holds yet (a shard not run or not finished). */
  missing: number;
  cells: number;
}

function readRunRecord(dir: string): RunRecordOnDisk {
  const file = runFiles(dir).record;
  if (!fs.existsSync(file)) throw new IwrError("CONFIG_INVALID", `merge: ${dir} is not a run folder (it has no run.json made by iwr run)`);
  let record: RunRecordOnDisk;
  try {
    record = JSON.parse(fs.readFileSync(file, "utf8")) as RunRecordOnDisk;
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `merge: cannot read ${file}: ${errorMessage(error)}`);
  }
  if (typeof record.runKey !== "string")
    throw new IwrError("CONFIG_INVALID", `merge: ${file} has no run key (made by an older iwr run); run the shards again with this version`);
  return record;
}

/** Every cell.json under `dir`, by cell key: the folder it sits in and whether the cell finished. */
function cellFolders(dir: string): Map<string, { folder: string; finished: boolean }> {
  const found = new Map<string, { folder: string; finished: boolean }>();
  const arms = path.join(dir, "arms");
  if (!fs.existsSync(arms)) return found;
  for (const entry of fs.readdirSync(arms, { recursive: true, encoding: "utf8" })) {
    if (path.basename(entry) !== RESULT_FILES.cell) continue;
    const record = readCellRecord(path.join(arms, entry));
    if (record) found.set(record.cellKey, { folder: path.dirname(path.join(arms, entry)), finished: record.status === "finished" });
  }
  return found;
}

export function mergeRuns(dirs: readonly string[], out: string): MergeSummary {
  if (dirs.length === 0) throw new IwrError("CONFIG_INVALID", "merge: name at least one run folder");
  const outDir = path.resolve(out);
  const inputs = dirs.map((dir) => ({ dir: path.resolve(dir), record: readRunRecord(path.resolve(dir)) }));
  if (inputs.some((input) => input.dir === outDir))
    throw new IwrError("CONFIG_INVALID", `merge: --out ${outDir} is one of the folders to merge; merge into a new folder`);
  const first = inputs[0]!;
  for (const input of inputs.slice(1)) {
    if (input.record.runKey !== first.record.runKey) {
      throw new IwrError(
        "CONFIG_INVALID",
        `merge: ${input.dir} and ${first.dir} were made by different configs ` +
          `(run keys ${input.record.runKey!.slice(0, 16)} and ${first.record.runKey!.slice(0, 16)}: ` +
          `${input.record.config?.file ?? "?"} vs ${first.record.config?.file ?? "?"}); only shards of one run merge`,
      );
    }
  }
  if (fs.existsSync(runFiles(outDir).record)) {
    const existing = readRunRecord(outDir);
    if (existing.runKey !== first.record.runKey)
      throw new IwrError(
        "CONFIG_INVALID",
        `merge: --out ${outDir} already holds another run (run key ${existing.runKey!.slice(0, 16)}, not ${first.record.runKey!.slice(0, 16)})`,
      );
  }
  const allCells = first.record.allCells ?? first.record.cells ?? [];
  const wanted = new Set(allCells);
  const present = cellFolders(outDir);
  let copied = 0;
  let kept = 0;
  // Per cell, the copy to take: a finished one over a failed one (a shard rerun with --retry-errors), else the first.
  const chosen = new Map<string, { input: (typeof inputs)[number]; folder: string; finished: boolean }>();
  for (const input of inputs) {
    const own = new Set(input.record.cells ?? []);
    for (const [key, found] of cellFolders(input.dir)) {
      if (!own.has(key) || !wanted.has(key)) continue;
      const earlier = chosen.get(key);
      if (!earlier || (found.finished && !earlier.finished)) chosen.set(key, { input, ...found });
    }
  }
  for (const [key, { input, folder, finished }] of chosen) {
    const target = path.join(outDir, path.relative(input.dir, folder));
    const there = present.get(key);
    // Already merged: kept, unless it failed and a finished copy has come since.
    if (there?.folder === target && (there.finished || !finished)) {
      kept += 1;
      continue;
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const staging = tempPathBeside(target);
    fs.cpSync(folder, staging, { recursive: true });
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(staging, target);
    copied += 1;
  }
  fs.mkdirSync(outDir, { recursive: true });
  fs.copyFileSync(runFiles(first.dir).config, runFiles(outDir).config);
  const { shard: _shard, allCells: _all, ...rest } = first.record;
  const merged = {
    ...rest,
    cells: allCells,
    mergedFrom: inputs.map((input) => ({
      dir: input.dir,
      ...(input.record.shard ? { shard: input.record.shard } : {}),
      cells: input.record.cells?.length ?? 0,
    })),
  };
  writeFileAtomicSync(runFiles(outDir).record, `${JSON.stringify(merged, null, 2)}\n`);
  const holding = cellFolders(outDir);
  return { out: outDir, copied, kept, missing: allCells.filter((key) => !holding.has(key)).length, cells: allCells.length };
}
