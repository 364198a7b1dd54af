/**
 * self-check: the agent's feedback signal computed on the cell's page, to set beside the
 * evaluator's Final (how well the signal tracks the evaluator). It reaches no generator.
 */
import { type CellConfig, type CellUpdate, type CellValues, workOf } from "../state.ts";

export async function selfCheck(state: CellValues, config: CellConfig): Promise<CellUpdate> {
  const work = workOf(config);
  if (!work.selfCheck || state.produced?.status !== "made") return {};
  return { selfCheck: await work.selfCheck(state.cellKey) };
}
