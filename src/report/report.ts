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
import { AGENT_FEEDBACK_KINDS, armKindLabel } from "../results/tracks.ts";
import { loadTasks } from "../tasks/loader.ts";
import { reportHtml, reportMarkdown } from "./render.ts";
import { buildReportData, type ReportArm, type ReportData } from "./report-data.ts";

interface RunRecord {
  name: string;
  tasks: { file: string };
  evaluator: Record<string, unknown>;
  arms: Array<{ name: string; kind: string; model?: string; agent?: { feedback?: string } }>;
  compare?: [string, string];
  bootstrapResamples?: number;
  /** The keys of the config's cells (written by iwr run): cells of an earlier config left in the folder are not counted. */
  cells?: string[];
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

export async function writeReport(
  runDir: string,
  options: { compare?: [string, string]; resamples?: number } = {},
): Promise<{ data: ReportData; files: ReturnType<typeof runFiles> }> {
  const files = runFiles(runDir);
  if (!fs.existsSync(files.record)) throw new IwrError("IO", `${runDir} is not a run folder: it has no run.json (made by iwr run)`);
  const run = JSON.parse(fs.readFileSync(files.record, "utf8")) as RunRecord;
  // Read as the run read them: the official protocol lets a line without a resolution fall back.
  const recorded = (run.evaluator as { protocol?: unknown } | undefined)?.protocol;
  const protocol: ProtocolProfile = PROTOCOL_PROFILES.find((profile) => profile === recorded) ?? "corrected";
  const tasks = await loadTasks(run.tasks.file, { resolutionFallback: profileRules(protocol).missingResolution });
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
    arms: run.arms.map(reportArm),
    tasks,
    records,
    ...(compare ? { compare } : {}),
    resamples: options.resamples ?? run.bootstrapResamples ?? 10_000,
  });
  // Redacted like every record: an error message in a cell may quote what a key looked like.
  writeFileAtomicSync(files.reportJson, redactString(`${JSON.stringify(data, null, 2)}\n`));
  writeFileAtomicSync(files.reportMd, redactString(reportMarkdown(data)));
  writeFileAtomicSync(files.reportHtml, redactString(await reportHtml(data)));
  return { data, files };
}
