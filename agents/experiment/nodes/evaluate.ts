/** evaluate: the fixed evaluator on the cell's page, the same for every arm and unchanged. */
import { type CellConfig, type CellUpdate, type CellValues, workOf } from "../state.ts";

export async function evaluate(state: CellValues, config: CellConfig): Promise<CellUpdate> {
  return { evaluation: await workOf(config).evaluate(state.cellKey) };
}
