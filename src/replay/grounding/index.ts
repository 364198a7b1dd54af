/** One entry point for choosing a grounder by name (`--grounding llm|heuristic`). */
import { IwrError } from "../../errors.ts";
import type { ModelClient } from "../../models/types.ts";
import { createHeuristicGrounder } from "./heuristic.ts";
import { createLlmGrounder } from "./llm.ts";
import type { Grounder, GrounderKind } from "./types.ts";

export const GROUNDER_KINDS: readonly GrounderKind[] = ["llm", "heuristic"];

export function createGrounder(kind: GrounderKind, options: { client?: ModelClient } & Omit<LlmGrounderOptions, "client"> = {}): Grounder {
  if (kind === "heuristic") return createHeuristicGrounder();
  const { client, ...rest } = options;
  if (!client) throw new IwrError("CONFIG_INVALID", "grounding 'llm' needs a model client (--judge-model / --base-url)");
  return createLlmGrounder({ client, ...rest });
}

export { createHeuristicGrounder, keyFromDescription, rankElements } from "./heuristic.ts";
export { createLlmGrounder, parseGroundingReply, parseGroundingReplyAsHarness } from "./llm.ts";
export type { Grounder, GrounderKind, GroundingAnswer, GroundingContext, GroundingQuery, KeyAnswer } from "./types.ts";

import type { LlmGrounderOptions } from "./llm.ts";
