/** One entry point for choosing an assertion judge by name (`--judge llm|heuristic`). */
import { IwrError } from "../../errors.ts";
import type { ModelClient } from "../../models/types.ts";
import { createHeuristicJudge } from "./heuristic.ts";
import { createLlmJudge } from "./llm.ts";
import type { AssertionJudge, JudgeKind } from "./types.ts";

export function createAssertionJudge(
  kind: JudgeKind,
  options: { client?: ModelClient } & Omit<Parameters<typeof createLlmJudge>[0], "client"> = {},
): AssertionJudge {
  if (kind === "heuristic") return createHeuristicJudge();
  const { client, ...rest } = options;
  if (!client) throw new IwrError("CONFIG_INVALID", "judge 'llm' needs a model client (--judge-model / --base-url)");
  return createLlmJudge({ client, ...rest });
}

export { createLlmJudge } from "./llm.ts";
export { parseJudgeReplyAsHarness } from "./parse-reply.ts";
export type { AssertionJudge, JudgeKind } from "./types.ts";
