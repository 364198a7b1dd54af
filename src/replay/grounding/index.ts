/** One entry point for choosing a grounder by name (`--grounding llm|heuristic`). */
import { IwrError } from "../../errors.ts";
import type { ModelClient } from "../../models/types.ts";
import { createHeuristicGrounder } from "./heuristic.ts";
import { createLlmGrounder } from "./llm.ts";
import type { Grounder, GrounderKind } from "./types.ts";

export function createGrounder(kind: GrounderKind, options: { client?: ModelClient } & Omit<LlmGrounderOptions, "client"> = {}): Grounder {
  if (kind === "heuristic") return createHeuristicGrounder();
  const { client, ...rest } = options;
  if (!client) throw new IwrError("CONFIG_INVALID", "grounding 'llm' needs a model client (--judge-model / --base-url)");
  return createLlmGrounder({ client, ...rest });
}

export { parseGroundingReplyAsHarness } from "./llm.ts";
export type { Grounder, GrounderKind } from "./types.ts";

import type { LlmGrounderOptions } from "./llm.ts";
