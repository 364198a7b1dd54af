/**
 * `iwr report <run-dir>` (also the end of `iwr run`): the report rebuilt from the run
 * folder alone — run.json names the task file, the arms and the evaluator; every cell.json
 * and eval.json under arms/ gives the numbers — written as report.json, report.md and a
 * self-contained report.html.
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { IwrError } from "../errors.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { readVerifiedJson } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import { NO_USAGE } from "../models/usage.ts";
import { PROTOCOL_PROFILES, type ProtocolProfile, profileRules } from "../protocol.ts";
import { CELL_RECORD_VERSION, type CellRecord, verifyCellRecord } from "../results/cell-record.ts";
import { RESULT_FILES, runFiles } from "../results/layout.ts";
import { AGENT_FEEDBACK_KINDS, armKindLabel } from "../results/tracks.ts";
import { loadTasks } from "../tasks/loader.ts";
import type { ReportArm } from "./agent-report-parts.ts";
import { reportHtml } from "./render-html.ts";
import { reportMarkdown } from "./render-markdown.ts";
import { buildReportData, type ReportData } from "./report-data.ts";

/** The fields of run.json the report reads, checked before use. */
const RunRecordSchema = z.looseObject({
  name: z.string(),
  tasks: z.looseObject({ file: z.string() }),
  evaluator: z.record(z.string(), z.unknown()),
  arms: z.array(z.looseObject({ name: z.string(), kind: z.string() })),
  cells: z.array(z.string()).optional(),
  repeats: z.number().int().positive().optional(),
});

/** What the report and `iwr view` read of run.json. */
export interface RunRecord {
  name: string;
  tasks: { file: string };
  evaluator: Record<string, unknown>;
  arms: Array<{ name: string; kind: string; model?: string; agent?: { feedback?: string } }>;
  compare?: [string, string];
  bootstrapResamples?: number;
  /** The keys of the config's cells (written by iwr run): cells of an earlier config left in the folder are not counted. */
  cells?: string[];
  repeats?: number;
  startedAt?: string;
}

/** run.json of a run folder, verified, or IwrError("IO") saying the folder is not one or the file is damaged. */
export function readRunRecord(runDir: string): RunRecord {
  const files = runFiles(runDir);
  if (!fs.existsSync(files.record)) throw new IwrError("IO", `${runDir} is not a run folder: it has no run.json (made by iwr run)`);
  const read = readVerifiedJson(files.record, RunRecordSchema);
  if (read.status !== "ok")
    throw new IwrError("IO", `${files.record} is ${read.status === "missing" ? "missing" : `damaged (${read.reason})`}: the report is built from it`, {
      file: files.record,
    });
  return read.value as RunRecord;
}

/** The protocol profile the run was scored under (run.json's evaluator), the corrected one when it names none. */
export function runProtocol(run: RunRecord): ProtocolProfile {
  const recorded = (run.evaluator as { protocol?: unknown } | undefined)?.protocol;
  return PROTOCOL_PROFILES.find((profile) => profile === recorded) ?? "corrected";
}

/** Repeats of an arm of this kind: model and module arms run each repeat, the others once (as the plan makes them). */
const repeatsOfKind = (kind: string, repeats: number) => (kind === "single-pass" || kind === "agent" || kind.startsWith("module:") ? repeats : 1);

interface FoundCells {
  records: Array<{ record: CellRecord; dir: string }>;
  /** cell.json files that are there but cannot be read, with where they sit and why. */
  damaged: Array<{ arm: string; repeat: number; taskId: number; dir: string; reason: string }>;
}

/** Every cell.json under `<run>/arms/<arm>/repeat-<k>/<id>/<folder>/`, verified. */
function cellRecords(runDir: string): FoundCells {
  const armsDir = path.join(runDir, "arms");
  const found: FoundCells = { records: [], damaged: [] };
  if (!fs.existsSync(armsDir)) return found;
  const list = (dir: string) => fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.name.startsWith("."));
  for (const arm of list(armsDir)) {
    for (const repeat of list(path.join(armsDir, arm.name))) {
      for (const task of list(path.join(armsDir, arm.name, repeat.name))) {
        for (const folder of list(path.join(armsDir, arm.name, repeat.name, task.name))) {
          const dir = path.join(armsDir, arm.name, repeat.name, task.name, folder.name);
          const read = verifyCellRecord(path.join(dir, RESULT_FILES.cell));
          if (read.status === "ok") found.records.push({ record: read.value, dir });
          const repeatIndex = /^repeat-(\d+)$/.exec(repeat.name)?.[1];
          if (read.status === "corrupt" && repeatIndex !== undefined && /^\d+$/.test(task.name))
            found.damaged.push({ arm: arm.name, repeat: Number(repeatIndex), taskId: Number(task.name), dir, reason: read.reason });
        }
      }
    }
  }
  return found;
}

/** An arm of run.json as the report reads it: an agent arm with oracle feedback is labelled as such wherever it appears. */
function reportArm(arm: RunRecord["arms"][number]): ReportArm {
  const generator = arm.kind === "single-pass" || arm.kind === "agent" ? arm.kind : undefined;
  const feedback = generator === "agent" ? (AGENT_FEEDBACK_KINDS.find((kind) => kind === arm.agent?.feedback) ?? "self-check") : undefined;
  return {
    name: arm.name,
    kind: armKindLabel(arm.kind, feedback),
    ...(generator ? { generator } : {}),
    ...(feedback ? { feedback } : {}),
    ...(arm.model ? { model: arm.model } : {}),
  };
}

/**
 * A cell whose cell.json is damaged, as a failed cell saying so: the report cannot recompute
 * it (a rerun of the experiment does), and dropping it would change the arm's averages
 * without a word. Counted only where the run's config has a cell and no readable record does.
 */
function damagedCellRecord(entry: FoundCells["damaged"][number], kind: string): { record: CellRecord; dir: string } {
  const file = path.join(entry.dir, RESULT_FILES.cell);
  const error = { code: "RECORD_DAMAGED", message: `${file} is damaged (${entry.reason}); iwr run on the config runs the cell again` };
  return {
    dir: entry.dir,
    record: {
      version: CELL_RECORD_VERSION,
      cellKey: "",
      arm: entry.arm,
      kind,
      repeat: entry.repeat,
      taskId: entry.taskId,
      status: "failed",
      produced: { status: "failed", error, usage: { ...NO_USAGE }, wallMs: 0 },
      evaluation: { status: "failed", error, wallMs: 0 },
      iterations: [],
      error: { ...error, stage: "evaluate" },
      finishedAt: "",
    },
  };
}

export async function writeReport(
  runDir: string,
  options: { compare?: [string, string]; resamples?: number } = {},
): Promise<{ data: ReportData; files: ReturnType<typeof runFiles>; htmlBytes: number }> {
  const files = runFiles(runDir);
  const run = readRunRecord(runDir);
  // Read as the run read them: the official protocol lets a line without a resolution fall back.
  const tasks = await loadTasks(run.tasks.file, { resolutionFallback: profileRules(runProtocol(run)).missingResolution });
  const known = new Set(run.arms.map((arm) => arm.name));
  const current = run.cells ? new Set(run.cells) : undefined;
  const found = cellRecords(runDir);
  const records = found.records.filter(({ record }) => known.has(record.arm) && (!current || current.has(record.cellKey)));
  const taken = new Set(records.map(({ record }) => `${record.arm}\0${record.repeat}\0${record.taskId}`));
  const kinds = new Map(run.arms.map((arm) => [arm.name, arm.kind]));
  const taskIds = new Set(tasks.map((task) => task.id));
  for (const entry of found.damaged) {
    const kind = kinds.get(entry.arm);
    const where = `${entry.arm}\0${entry.repeat}\0${entry.taskId}`;
    if (kind === undefined || taken.has(where) || !taskIds.has(entry.taskId) || entry.repeat >= repeatsOfKind(kind, run.repeats ?? 1)) continue;
    taken.add(where);
    records.push(damagedCellRecord(entry, kind));
  }
  const order = new Map(run.arms.map((arm, index) => [arm.name, index]));
  records.sort((a, b) => order.get(a.record.arm)! - order.get(b.record.arm)! || a.record.repeat - b.record.repeat || a.record.taskId - b.record.taskId);
  const compare = options.compare ?? run.compare;
  const unknown = options.compare?.filter((arm) => !known.has(arm)) ?? [];
  if (unknown.length > 0)
    throw new IwrError(
      "CONFIG_INVALID",
      `--compare: no arm named ${unknown.map((arm) => `'${arm}'`).join(", ")} in ${runDir} (arms: ${[...known].join(", ")})`,
    );
  const data = buildReportData({
    name: run.name,
    evaluator: run.evaluator,
    arms: run.arms.map(reportArm),
    tasks,
    records,
    ...(compare ? { compare } : {}),
    resamples: options.resamples ?? run.bootstrapResamples ?? 10_000,
  });
  const damaged = data.cells.filter((cell) => cell.damaged !== undefined);
  for (const cell of damaged) log("report").warn(`${cell.arm} r${cell.repeat} task ${cell.taskId}: ${cell.damaged}; reported as failed`);
  if (damaged.length > 0)
    data.notes.push(
      "Damaged records: cells whose cell.json or eval.json could not be read are counted as failed, with the file and the reason " +
        "(iwr run on the config runs them again).",
    );
  // Redacted like every record: an error message in a cell may quote what a key looked like.
  writeFileAtomicSync(files.reportJson, redactString(`${JSON.stringify(data, null, 2)}\n`));
  writeFileAtomicSync(files.reportMd, redactString(reportMarkdown(data)));
  const html = redactString(await reportHtml(data, { runDir }));
  writeFileAtomicSync(files.reportHtml, html);
  return { data, files, htmlBytes: Buffer.byteLength(html) };
}
