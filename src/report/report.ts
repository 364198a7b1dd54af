/**
 * `iwr report <run-dir>` (also the end of `iwr run`): the report rebuilt from the run
 * folder alone — run.json names the task file, the arms and the evaluator; every cell.json
 * and eval.json under arms/ gives the numbers — written as report.json, report.md and a
 * self-contained report.html.
 */
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { redactString } from "../log/redact.ts";
import { PROTOCOL_PROFILES, type ProtocolProfile, profileRules } from "../protocol.ts";
import { type CellRecord, readCellRecord } from "../results/cell-record.ts";
import { RESULT_FILES, runFiles } from "../results/layout.ts";
import { loadTasks } from "../tasks/loader.ts";
import { reportHtml, reportMarkdown } from "./render.ts";
import { buildReportData, type ReportData } from "./report-data.ts";

/** What the report and `iwr view` read of run.json. */
export interface RunRecord {
  name: string;
  tasks: { file: string };
  evaluator: Record<string, unknown>;
  arms: Array<{ name: string; kind: string }>;
  compare?: [string, string];
  bootstrapResamples?: number;
  /** The keys of the config's cells (written by iwr run): cells of an earlier config left in the folder are not counted. */
  cells?: string[];
  startedAt?: string;
}

/** run.json of a run folder, or IwrError("IO") saying the folder is not one. */
export function readRunRecord(runDir: string): RunRecord {
  const files = runFiles(runDir);
  if (!fs.existsSync(files.record)) throw new IwrError("IO", `${runDir} is not a run folder: it has no run.json (made by iwr run)`);
  try {
    return JSON.parse(fs.readFileSync(files.record, "utf8")) as RunRecord;
  } catch (error) {
    throw new IwrError("IO", `${files.record}: not readable JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** The protocol profile the run was scored under (run.json's evaluator), the corrected one when it names none. */
export function runProtocol(run: RunRecord): ProtocolProfile {
  const recorded = (run.evaluator as { protocol?: unknown } | undefined)?.protocol;
  return PROTOCOL_PROFILES.find((profile) => profile === recorded) ?? "corrected";
}

/** Every cell.json under `<run>/arms/<arm>/repeat-<k>/<id>/<folder>/`. */
function cellRecords(runDir: string): Array<{ record: CellRecord; dir: string }> {
  const armsDir = path.join(runDir, "arms");
  if (!fs.existsSync(armsDir)) return [];
  const found: Array<{ record: CellRecord; dir: string }> = [];
  const list = (dir: string) => fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.name.startsWith("."));
  for (const arm of list(armsDir)) {
    for (const repeat of list(path.join(armsDir, arm.name))) {
      for (const task of list(path.join(armsDir, arm.name, repeat.name))) {
        for (const folder of list(path.join(armsDir, arm.name, repeat.name, task.name))) {
          const dir = path.join(armsDir, arm.name, repeat.name, task.name, folder.name);
          const record = readCellRecord(path.join(dir, RESULT_FILES.cell));
          if (record) found.push({ record, dir });
        }
      }
    }
  }
  return found;
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
  const records = cellRecords(runDir).filter(({ record }) => known.has(record.arm) && (!current || current.has(record.cellKey)));
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
    arms: run.arms,
    tasks,
    records,
    ...(compare ? { compare } : {}),
    resamples: options.resamples ?? run.bootstrapResamples ?? 10_000,
  });
  // Redacted like every record: an error message in a cell may quote what a key looked like.
  writeFileAtomicSync(files.reportJson, redactString(`${JSON.stringify(data, null, 2)}\n`));
  writeFileAtomicSync(files.reportMd, redactString(reportMarkdown(data)));
  const html = redactString(await reportHtml(data, { runDir }));
  writeFileAtomicSync(files.reportHtml, html);
  return { data, files, htmlBytes: Buffer.byteLength(html) };
}
