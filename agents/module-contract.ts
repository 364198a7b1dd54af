/**
 * The contract of a `module:<path>` experiment arm: a researcher's own generator
 * (README, "Your own generator"). A module exports
 *
 *   export async function generate(inputs: TaskInputs, context: GeneratorContext): Promise<string | { html: string }>
 *
 * (or the same function as its default export), or a compiled LangGraph graph as `graph`,
 * invoked as `graph.invoke({ inputs }, { context, signal })` and returning a state with
 * `html`. It sees the task's inputs only (video, asset sheets, assets folder, resolution;
 * never checkpoints, actions or assertions) and returns one page; the runner writes it and
 * it runs sandboxed like every candidate. agents/assets-baseline is an example.
 */
import type { ModelClient } from "../src/models/index.ts";
import type { TaskInputs } from "../src/tasks/inputs.ts";

export interface GeneratorContext {
  /** The arm's model client, when the arm names a model (cache, retries and usage included). */
  model?: ModelClient;
  /** The folder index.html will be written to. */
  outputDir: string;
  /** Relative path from outputDir to the task's assets folder (what the benchmark's placeholder becomes). */
  assetsBase: string;
  /** Which repeat this is (0 = the first). */
  repeat: number;
  /** Aborted when the run stops or the cell's time is up. */
  signal: AbortSignal;
  /** A line in the run's log, attributed to the arm and task. */
  log: (message: string) => void;
}

export type GeneratorReply = string | { html: string };
export type PageGenerator = (inputs: TaskInputs, context: GeneratorContext) => Promise<GeneratorReply> | GeneratorReply;
