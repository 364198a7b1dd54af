/**
 * select: keep the best draft by self-score — a regression never replaces it, so the next
 * revision starts from the best (backtracking) — then decide, by returning a Command:
 * stop (END, with the reason recorded), critique, or, with the critique switched off,
 * revise straight from the best draft's findings.
 */
import { Command, END } from "@langchain/langgraph";
import { feedbackOf, findingsText } from "../feedback.ts";
import { reviseSends } from "../jobs.ts";
import { type AgentConfig, type AgentValues, agentContextOf, type Draft, type StopReason, totalUsage } from "../state.ts";
import { storeFile } from "../store.ts";

/** A draft replaces the best only when its self-score is higher by at least this much (ties keep the earlier). */
export const MIN_IMPROVEMENT = 0.001;

export function bestOf(drafts: readonly Draft[], current: Draft | undefined): Draft | undefined {
  let best = current;
  for (const draft of drafts) {
    if (!draft.checked || !draft.page || draft.selfScore === undefined) continue;
    if (!best || draft.selfScore >= (best.selfScore ?? 0) + MIN_IMPROVEMENT) best = draft;
  }
  return best;
}

/** Why the loop stops here, or undefined to go on; the first reason that holds, in this order. */
export function stopReasonFor(state: AgentValues, best: Draft | undefined, round: number, stale: number, now: number): StopReason | undefined {
  const { settings } = state;
  if (!best) return "no-page";
  const spent = totalUsage(state.usageByNode);
  if (settings.budgetTokens !== undefined && spent.inputTokens + spent.outputTokens >= settings.budgetTokens) return "token-budget";
  if (settings.budgetUsd !== undefined && spent.costUsd >= settings.budgetUsd) return "cost-budget";
  if (round >= settings.maxIterations) return "max-iterations";
  if (settings.wallTimeSec !== undefined && state.startedAtMs !== undefined && now - state.startedAtMs >= settings.wallTimeSec * 1000) return "wall-time";
  if (round > 0 && stale >= settings.patience) return "no-improvement";
  if (best.findings === 0) return "no-findings";
  return undefined;
}

export async function select(state: AgentValues, config: AgentConfig): Promise<Command> {
  const context = await agentContextOf(config);
  const round = state.drafts.reduce((latest, draft) => Math.max(latest, draft.round), 0);
  const previous = state.drafts.find((draft) => draft.id === state.bestDraftId);
  const best = bestOf(
    state.drafts.filter((draft) => draft.round === round),
    previous,
  );
  const improved = best !== undefined && best.id !== previous?.id;
  const stale = round === 0 || improved ? 0 : state.roundsWithoutImprovement + 1;
  const stopReason = stopReasonFor(state, best, round, stale, Date.now());
  const spent = totalUsage(state.usageByNode);
  config.writer?.({
    node: "select",
    round,
    ...(best ? { draft: best.id, bestSelfScore: best.selfScore } : {}),
    inputTokens: spent.inputTokens,
    outputTokens: spent.outputTokens,
    costUsd: spent.costUsd,
    ...(stopReason ? { message: `stop: ${stopReason}` } : {}),
  });
  const update = { ...(best ? { bestDraftId: best.id } : {}), round, roundsWithoutImprovement: stale, ...(stopReason ? { stopReason } : {}) };
  if (stopReason || !best) return new Command({ update, goto: END });
  if (state.settings.critique) return new Command({ update, goto: "critique" });
  // No critic: the reviser gets the best draft's findings as they are.
  const problems = storeFile(context.workDir, `${findingsText(feedbackOf(context.workDir, best.id)?.findings ?? [])}\n`, "md");
  return new Command({ update, goto: reviseSends({ ...state, ...update }, problems) });
}
