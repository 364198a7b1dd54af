/**
 * The agent's switches and budgets: everything a researcher may turn off or bound, one
 * zod object, recorded with every result (agent.json) and usable as an experiment arm.
 *
 *   breadth k, maxIterations 0     best-of-k single drafts, selected by self-score
 *   breadth 1, maxIterations 0     "describe, then code" (analyze, then one draft)
 *   analyze false                  drafts from the frames alone (the single-pass prompt)
 *   critique false                 revise from the self-check's findings alone
 *   replay false                   self-check the initial screen only (refinement without execution)
 *   revise "edits"                 search/replace edits, a complete page when they do not apply
 */
import { z } from "zod";
import { sha256Hex } from "../../src/files/content-hash.ts";
import { canonicalJson } from "../../src/models/request-key.ts";

export const AgentSettingsSchema = z.strictObject({
  /** Where the replayed actions come from: the agent's own analysis, or the task's action descriptions (a separate track). */
  trajectory: z.enum(["inferred", "given"]).default("inferred"),
  analyze: z.boolean().default(true),
  /** Drafts made in parallel, first and at each revision. */
  breadth: z.number().int().min(1).max(8).default(1),
  /** Critique-and-revise rounds after the first drafts. */
  maxIterations: z.number().int().min(0).max(50).default(3),
  critique: z.boolean().default(true),
  replay: z.boolean().default(true),
  revise: z.enum(["full", "edits"]).default("full"),
  /** Drafting temperature; absent: the drafting model's own. Breadth above 1 wants one above 0. */
  temperature: z.number().min(0).max(2).optional(),
  /** Rounds without a better self-score before stopping. */
  patience: z.number().int().min(1).default(2),
  /** Stop once this many tokens (input + output, every model call) are spent. */
  budgetTokens: z.number().int().positive().optional(),
  /** Stop once this much is spent, in US dollars (the models' pricing). */
  budgetUsd: z.number().positive().optional(),
  /** Stop starting new rounds after this many seconds. */
  wallTimeSec: z.number().positive().optional(),
  /** (Video frame, screenshot) pairs shown to the critic. */
  critiquePairs: z.number().int().min(1).max(8).default(3),
});
export type AgentSettings = z.infer<typeof AgentSettingsSchema>;
export type AgentSettingsInput = z.input<typeof AgentSettingsSchema>;

/** Supersteps of the first drafts (prepare, analyze, draft, self-check, select) and of a round (critique, revise, self-check, select). */
const FIRST_SUPERSTEPS = 5;
const ROUND_SUPERSTEPS = 4;
const SPARE_SUPERSTEPS = 3;

/**
 * LangGraph's recursion limit for these settings: the loop stops by its own counter, and
 * the limit only guards against a wiring bug, so it is derived from the budget, never left
 * at LangGraph's 25 (five rounds of a five-node loop).
 */
export function recursionLimitFor(settings: Pick<AgentSettings, "maxIterations">): number {
  return FIRST_SUPERSTEPS + ROUND_SUPERSTEPS * settings.maxIterations + SPARE_SUPERSTEPS;
}

/** Short hash of the settings, naming a run's thread and telling a finished result from one made otherwise. */
export function settingsHash(settings: AgentSettings): string {
  return sha256Hex(canonicalJson(settings)).slice(0, 16);
}
