/**
 * self-check: the context's feedback provider on every new draft, concurrently (the run's
 * page slots bound how many pages are open at once). Normally the self-check: each draft
 * checked in its own sandboxed browser context, from the task's inputs and the run's
 * actions only: the inferred ones, or the given ones in that track; none with replay
 * switched off (the initial screen alone). The feedback goes to
 * iterations/<id>/feedback.json, where critique and revise read it.
 */
import { errorMessage, toErrorRecord } from "../../../src/errors.ts";
import { log } from "../../../src/log/logger.ts";
import { agentWorkFiles } from "../../../src/results/layout.ts";
import { writeFeedback } from "../feedback.ts";
import { type AgentConfig, type AgentUpdate, type AgentValues, agentContextOf, type Draft } from "../state.ts";

export async function selfCheck(state: AgentValues, config: AgentConfig): Promise<AgentUpdate> {
  const context = await agentContextOf(config);
  const pending = state.drafts.filter((entry) => !entry.checked);
  const actions = state.settings.replay ? state.actions : [];
  const checked = await Promise.all(
    pending.map(async (entry): Promise<Draft> => {
      if (!entry.page) return { ...entry, checked: true, selfScore: 0 };
      const dir = agentWorkFiles(context.workDir).iteration(entry.id);
      const started = Date.now();
      try {
        const feedback = await context.feedback({ inputs: state.inputs, actions, trajectory: state.settings.trajectory, draftDir: dir });
        writeFeedback(dir, feedback);
        config.writer?.({ node: "self-check", round: entry.round, draft: entry.id, selfScore: feedback.score });
        return {
          ...entry,
          checked: true,
          selfScore: feedback.score,
          ...(feedback.behaviour !== undefined ? { behaviour: feedback.behaviour } : {}),
          ...(feedback.appearance !== undefined ? { appearance: feedback.appearance } : {}),
          findings: feedback.findings.length,
          selfCheckMs: Date.now() - started,
          selfCheckSpan: { startMs: started, endMs: Date.now() },
        };
      } catch (error) {
        log("agent").warn(`task ${state.inputs.id}: self-check of draft ${entry.id} failed: ${errorMessage(error)}`);
        return { ...entry, checked: true, selfScore: 0, error: entry.error ?? toErrorRecord(error), selfCheckMs: Date.now() - started };
      }
    }),
  );
  return { drafts: checked };
}
