/**
 * The work of an experiment's cells, handed to the cell graph (agents/experiment) as its
 * context: the arm's generator (arms.ts), the fixed evaluator (the same for every arm,
 * writing eval.json into the cell's folder), and the self-check of the page in the given
 * track when the experiment asks for it.
 */
import type { CellWork } from "../../agents/experiment/graph.ts";
import { toErrorRecord } from "../errors.ts";
import { readEvalRecord } from "../evaluator/eval-record.ts";
import { evaluateOneTask } from "../evaluator/evaluate-candidate.ts";
import type { Evaluator } from "../evaluator/evaluate-task.ts";
import type { PairingMode } from "../evaluator/settings.ts";
import type { VisualMetric } from "../metrics/visual.ts";
import { replayActionOf } from "../replay/replay.ts";
import { agentFiles, candidateFiles } from "../results/layout.ts";
import { runSelfCheck } from "../selfcheck/self-check.ts";
import { type ArmResources, producePage } from "./arms.ts";
import type { Cell } from "./cell.ts";
import { armFeedback, isCalibrationArm } from "./config.ts";

export interface CellWorkOptions {
  cells: ReadonlyMap<string, Cell>;
  resources: ArmResources;
  /** The fixed evaluator, made on first use (a worker that only generates never opens one). */
  evaluator: () => Promise<Evaluator>;
  pairing: PairingMode;
  /** Self-check every page with this metric (given track); absent: no self-check. */
  selfCheck?: { metric: VisualMetric; statesCacheDir?: string };
}

export function cellWork(options: CellWorkOptions): CellWork {
  const cellOf = (key: string): Cell => {
    const cell = options.cells.get(key);
    if (!cell) throw new Error(`unknown experiment cell '${key}'`);
    return cell;
  };
  const { selfCheck } = options;
  return {
    generate: (key) => producePage(cellOf(key), options.resources),
    async evaluate(key, draft) {
      const cell = cellOf(key);
      const { outcome } = await evaluateOneTask(
        cell.task,
        {
          resultDir: cell.resultDir,
          model: draft ? `${cell.arm.name}#draft-${draft.draft}` : cell.arm.name,
          pairing: options.pairing,
          candidateDir: draft?.dir ?? cell.dir,
          // A draft's scores go beside the agent's work folder, never into it. An agent with oracle feedback had
          // each draft scored by this same evaluator while it ran: those records are read back, not made again.
          ...(draft
            ? {
                recordDir: armFeedback(cell.arm) === "oracle" ? agentFiles(cell.dir).oracleScores(draft.draft) : agentFiles(cell.dir).draftScores(draft.draft),
              }
            : {}),
          calibration: isCalibrationArm(cell.arm.parsed.type),
        },
        await options.evaluator(),
      );
      // An eval.json that already scored this very page is kept ("skipped"): its scores are read back.
      const scores = outcome.status === "skipped" ? readEvalRecord(candidateFiles(outcome.recordDir).eval).scores : { final: outcome.final, ifs: outcome.ifs };
      return {
        status: outcome.status,
        ...(scores.final !== undefined ? { final: scores.final } : {}),
        ...(scores.ifs !== undefined ? { ifs: scores.ifs } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
        wallMs: outcome.wallMs,
      };
    },
    ...(selfCheck
      ? {
          // Given track: the task's inputs and its action descriptions, never its checkpoints or assertions.
          async selfCheck(key: string) {
            const cell = cellOf(key);
            const started = Date.now();
            try {
              const evaluator = await options.evaluator();
              const record = await runSelfCheck({
                inputs: cell.task.inputs,
                actions: cell.task.line.action_sequence.map(replayActionOf),
                trajectory: "given",
                candidateDir: cell.dir,
                metric: selfCheck.metric,
                ...(evaluator.pageSlots ? { pageSlots: evaluator.pageSlots } : {}),
                ...(evaluator.pageMemoryMiB ? { memoryLimitMiB: evaluator.pageMemoryMiB } : {}),
                ...(selfCheck.statesCacheDir ? { statesCacheDir: selfCheck.statesCacheDir } : {}),
              });
              return { selfScore: record.selfScore, wallMs: Date.now() - started };
            } catch (error) {
              return { error: toErrorRecord(error), wallMs: Date.now() - started };
            }
          },
        }
      : {}),
  };
}
