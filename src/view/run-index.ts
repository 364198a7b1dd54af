/**
 * What `iwr view` knows of a run folder: run.json, the run's tasks, and every finished
 * cell's scores and first failing step (the report's own cellScores, so the view and
 * report.json agree). Read-only: nothing here writes anywhere.
 *
 * Live mode: `refresh()` rescans the folder and re-reads only the cells whose cell.json
 * changed (iwr run writes it atomically, last, when a cell is finished), so a view opened
 * while the run writes follows new cells; `version` counts the changes.
 */
import fs from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors.ts";
import { log } from "../log/logger.ts";
import { profileRules } from "../protocol.ts";
import { type CellScores, cellScores, type ScoredTask } from "../report/cell-scores.ts";
import { type RunRecord, readRunRecord, runProtocol } from "../report/report.ts";
import { type CellRecord, readCellRecord } from "../results/cell-record.ts";
import { RESULT_FILES, runFiles } from "../results/layout.ts";
import { loadTaskSet } from "../tasks/loader.ts";
import type { Task } from "../tasks/schema.ts";

const logger = log("view");

/** One finished cell as the view lists it. */
export interface IndexedCell {
  /** `<arm>/<repeat>/<task id>`: the cell's address in the view's URLs. */
  id: string;
  kind: string;
  folder: string;
  record: CellRecord;
  scores: CellScores;
}

interface Entry extends IndexedCell {
  /** cell.json's modification time and size when it was read. */
  stamp: string;
}

/** The cell's address in URLs: arm names are safe folder names, so "/" cannot occur in one. */
export function cellId(arm: string, repeat: number, taskId: number): string {
  return `${arm}/${repeat}/${taskId}`;
}

const NO_TASK: ScoredTask = { truth: { checkpointPaths: [], actions: [] } };

export class RunIndex {
  readonly runDir: string;
  run: RunRecord;
  /** The run's tasks by id (empty when the task file could not be read: see tasksProblem). */
  tasks = new Map<number, Task>();
  tasksFile: string;
  /** Why some or all tasks could not be read (the view still lists their cells, without classes or checkpoints). */
  tasksProblem?: string;
  /** Bumped whenever a cell appears, changes or goes. */
  version = 0;
  private entries = new Map<string, Entry>();
  private ordered?: IndexedCell[];
  private byId = new Map<string, IndexedCell>();

  private constructor(runDir: string, run: RunRecord, tasksFile: string) {
    this.runDir = runDir;
    this.run = run;
    this.tasksFile = tasksFile;
  }

  /** Reads run.json and the task file, then every finished cell. */
  static async open(runDir: string, options: { tasksFile?: string } = {}): Promise<RunIndex> {
    const dir = path.resolve(runDir);
    const run = readRunRecord(dir);
    const index = new RunIndex(dir, run, path.resolve(options.tasksFile ?? run.tasks.file));
    await index.loadTasks();
    index.refresh();
    return index;
  }

  private async loadTasks(): Promise<void> {
    if (!fs.existsSync(this.tasksFile)) {
      this.tasksProblem = `the run's task file ${this.tasksFile} is not there (moved?): classes, actions and checkpoints are unknown; pass --tasks <file>`;
      return;
    }
    try {
      const set = await loadTaskSet(this.tasksFile, { resolutionFallback: profileRules(runProtocol(this.run)).missingResolution });
      for (const task of set.tasks) this.tasks.set(task.id, task);
      if (set.problems.length > 0)
        this.tasksProblem =
          `${set.problems.length} problem(s) in ${this.tasksFile}; ` +
          `tasks with problems show no classes or checkpoints (first: ${set.problems[0]!.message})`;
    } catch (error) {
      this.tasksProblem = `cannot read the task file ${this.tasksFile}: ${errorMessage(error)}`;
    }
  }

  get name(): string {
    return this.run.name;
  }

  /** The arms of run.json, in its order. */
  get arms(): ReadonlyArray<{ name: string; kind: string }> {
    return this.run.arms;
  }

  /** How many cells the run's config has (run.json's cell keys), when it lists them. */
  get expectedCells(): number | undefined {
    return this.run.cells?.length;
  }

  /**
   * Rescans the run folder: new and changed cell.json files are read (with their eval.json
   * and replay.json), vanished ones dropped. Returns whether anything changed.
   */
  refresh(): boolean {
    try {
      this.run = readRunRecord(this.runDir);
    } catch (error) {
      logger.warn(`keeping the last run.json: ${errorMessage(error)}`);
    }
    const known = new Set(this.run.arms.map((arm) => arm.name));
    const kinds = new Map(this.run.arms.map((arm) => [arm.name, arm.kind]));
    const current = this.run.cells ? new Set(this.run.cells) : undefined;
    const seen = new Set<string>();
    let changed = false;
    for (const { dir, folder } of cellFolders(this.runDir)) {
      const file = path.join(dir, RESULT_FILES.cell);
      let stat: fs.Stats;
      try {
        stat = fs.statSync(file);
      } catch {
        continue;
      }
      const stamp = `${stat.mtimeMs}:${stat.size}`;
      seen.add(dir);
      const existing = this.entries.get(dir);
      if (existing && existing.stamp === stamp) continue;
      const record = readCellRecord(file);
      if (!record || !known.has(record.arm) || (current && !current.has(record.cellKey))) {
        if (existing) {
          this.entries.delete(dir);
          changed = true;
        }
        continue;
      }
      const scores = cellScores(record, dir, this.tasks.get(record.taskId) ?? NO_TASK);
      this.entries.set(dir, { id: cellId(record.arm, record.repeat, record.taskId), kind: kinds.get(record.arm) ?? "", folder, record, scores, stamp });
      changed = true;
    }
    for (const dir of [...this.entries.keys()]) {
      if (!seen.has(dir)) {
        this.entries.delete(dir);
        changed = true;
      }
    }
    if (changed) {
      this.version++;
      this.ordered = undefined;
    }
    return changed;
  }

  /** Every finished cell: by arm (run.json's order), repeat, task. One per address (the first folder found wins). */
  cells(): readonly IndexedCell[] {
    if (!this.ordered) {
      const order = new Map(this.run.arms.map((arm, index) => [arm.name, index]));
      this.byId = new Map();
      for (const entry of this.entries.values()) if (!this.byId.has(entry.id)) this.byId.set(entry.id, entry);
      this.ordered = [...this.byId.values()].sort(
        (a, b) => order.get(a.record.arm)! - order.get(b.record.arm)! || a.record.repeat - b.record.repeat || a.record.taskId - b.record.taskId,
      );
    }
    return this.ordered;
  }

  cell(id: string): IndexedCell | undefined {
    this.cells();
    return this.byId.get(id);
  }
}

/** `<run>/arms/<arm>/repeat-<k>/<id>/<folder>/` for every candidate folder present (finished or not). */
function cellFolders(runDir: string): Array<{ dir: string; folder: string }> {
  const armsDir = path.join(runFiles(runDir).dir, "arms");
  const list = (dir: string) => {
    try {
      return fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.name.startsWith("."));
    } catch {
      return [];
    }
  };
  const found: Array<{ dir: string; folder: string }> = [];
  for (const arm of list(armsDir))
    for (const repeat of list(path.join(armsDir, arm.name)))
      for (const task of list(path.join(armsDir, arm.name, repeat.name)))
        for (const folder of list(path.join(armsDir, arm.name, repeat.name, task.name)))
          found.push({ dir: path.join(armsDir, arm.name, repeat.name, task.name, folder.name), folder: folder.name });
  return found;
}
