/**
 * generate: the arm's generator makes the cell's page (single pass, the agent's own
 * graph, a calibration page, a researcher's module, or a page made elsewhere).
 */
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { type CellConfig, type CellUpdate, type CellValues, workOf } from "../state.ts";

/**
 * Runs `work` as a root run of its own. A graph invoked inside a node inherits the
 * node's run config through LangChain's async-local storage and becomes a subgraph of
 * this cell (its checkpoint namespace and thread included): the agent's own checkpointer
 * and resume would then read the cell's state instead of its own.
 */
function detached<T>(work: () => Promise<T>): Promise<T> {
  return AsyncLocalStorageProviderSingleton.getInstance().run(undefined, work);
}

export async function generate(state: CellValues, config: CellConfig): Promise<CellUpdate> {
  const work = workOf(config);
  return { produced: await detached(() => work.generate(state.cellKey)) };
}
