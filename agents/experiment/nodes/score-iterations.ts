/**
 * score-iterations: the evaluator on each draft an agent saved, for the score-by-
 * iteration curve. The agent has finished before these scores exist, and they reach no
 * generator: they are reported only. The drafts are scored side by side.
 */
import type { IterationScore } from "../../../src/results/cell-record.ts";
import { type CellConfig, type CellUpdate, type CellValues, workOf } from "../state.ts";

export async function scoreIterations(state: CellValues, config: CellConfig): Promise<CellUpdate> {
  const work = workOf(config);
  // Side by side: the evaluator's page slots decide how many replay at once.
  const iterations: IterationScore[] = await Promise.all(
    (state.produced?.iterations ?? []).map(async (draft) => {
      const evaluation = await work.evaluate(state.cellKey, draft);
      return {
        draft: draft.draft,
        round: draft.round,
        ...(draft.selfScore !== undefined ? { selfScore: draft.selfScore } : {}),
        ...(evaluation.final !== undefined ? { final: evaluation.final } : {}),
        ...(evaluation.error ? { error: evaluation.error } : {}),
      };
    }),
  );
  return { iterations };
}
