/**
 * What OCR costs, by what each reading was for: the offline judge reads a screen in
 * stages (the candidate's, the true page's), the OCR metric reads checkpoints and
 * screenshots, the self-check the video's states and its own replay's. A stage is worth
 * keeping for what it finds for what it costs (calibration prints both), and the readings
 * it asks for cost very different amounts: a whole screen enlarged is read band by band,
 * a crop near a change is a fraction of a screen.
 *
 * A caller names the purpose around the work that may read (`readingFor`); the name
 * travels with the asynchronous calls below it (Node's AsyncLocalStorage), down to the
 * engine, which notes each reading it makes with the CPU it took. A picture is read once
 * per content (image-readings.ts), so the purpose that asked first pays for it; the others
 * find it read. The native engine's CPU is its process's own time over the reading (a
 * process's start, loading the model, about 0.1 CPU-s, counts with its first); the
 * WebAssembly engine's readings run in threads of this process and are counted without
 * CPU. Figures cover this process from its start, or from the last `forgetOcrCosts`.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** The purpose of readings asked for outside any `readingFor`. */
export const UNNAMED_PURPOSE = "not named";

export interface OcrCost {
  purpose: string;
  /** Readings the engine made for it. */
  readings: number;
  /** Their CPU time in seconds; undefined when the engine does not measure it. */
  cpuSec: number | undefined;
}

const purposes = new AsyncLocalStorage<string>();
const costs = new Map<string, { readings: number; cpuSec: number | undefined }>();

/** Runs `work` with `purpose` as the purpose of every OCR reading it causes (see the module comment). */
export function readingFor<T>(purpose: string, work: () => T): T {
  return purposes.run(purpose, work);
}

/** Notes one reading the engine made (for the purpose in force), with its CPU seconds when measured. */
export function noteOcrReading(cpuSec: number | undefined): void {
  const purpose = purposes.getStore() ?? UNNAMED_PURPOSE;
  const cost = costs.get(purpose) ?? { readings: 0, cpuSec: undefined };
  cost.readings += 1;
  if (cpuSec !== undefined) cost.cpuSec = (cost.cpuSec ?? 0) + cpuSec;
  costs.set(purpose, cost);
}

/** Every purpose's readings and CPU so far, the costliest first. */
export function ocrCosts(): OcrCost[] {
  return [...costs.entries()].map(([purpose, cost]) => ({ purpose, ...cost })).sort((a, b) => (b.cpuSec ?? 0) - (a.cpuSec ?? 0) || b.readings - a.readings);
}

/** Starts the figures again (a bench's next phase). */
export function forgetOcrCosts(): void {
  costs.clear();
}

/** The figures as a Markdown table, for calibration and the benchmarks: a row per purpose, the costliest first (a sentence when there are none). */
export function ocrCostTable(): string {
  const rows = ocrCosts();
  if (rows.length === 0) return "OCR made no readings (every picture was already read)";
  const total = rows.reduce((sum, row) => sum + (row.cpuSec ?? 0), 0);
  const cpu = (row: OcrCost) => (row.cpuSec === undefined ? "not measured" : row.cpuSec.toFixed(1));
  const share = (row: OcrCost) => (row.cpuSec === undefined || total === 0 ? "" : `${((100 * row.cpuSec) / total).toFixed(0)} %`);
  return [
    "| OCR readings made, by what they were for | readings | CPU s | share |",
    "|---|---:|---:|---:|",
    ...rows.map((row) => `| ${row.purpose} | ${row.readings} | ${cpu(row)} | ${share(row)} |`),
  ].join("\n");
}
