/**
 * self-check: the self-check library on every new draft, concurrently (the run's page
 * slots bound how many pages are open at once). Each draft is checked in its own
 * sandboxed browser context, from the task's inputs and the run's actions only: the
 * inferred ones, or the given ones in that track; none with replay switched off (the
 * initial screen alone). Writes iterations/<id>/{selfcheck.json, self-check/*.png,
 * findings.json}.
 */

import path from "node:path";
import { errorMessage, toErrorRecord } from "../../../src/errors.ts";
import { writeFileAtomicSync } from "../../../src/files/atomic.ts";
import { log } from "../../../src/log/logger.ts";
import { agentFiles, RESULT_FILES } from "../../../src/results/layout.ts";
import { runSelfCheck } from "../../../src/selfcheck/self-check.ts";
import { type AgentConfig, type AgentUpdate, type AgentValues, agentContextOf, type Draft } from "../state.ts";

export async function selfCheck(state: AgentValues, config: AgentConfig): Promise<AgentUpdate> {
  const context = await agentContextOf(config);
  const pending = state.drafts.filter((entry) => !entry.checked);
  const actions = state.settings.replay ? state.actions : [];
  const checked = await Promise.all(
    pending.map(async (entry): Promise<Draft> => {
      if (!entry.page) return { ...entry, checked: true, selfScore: 0 };
      const dir = agentFiles(context.workDir).iteration(entry.id);
      const started = Date.now();
      try {
        const record = await runSelfCheck({
          inputs: state.inputs,
          actions,
          trajectory: state.settings.trajectory,
          candidateDir: dir,
          metric: context.metric,
          ...context.host,
        });
        writeFileAtomicSync(path.join(dir, RESULT_FILES.findings), `${JSON.stringify(record.findings, null, 2)}\n`);
        config.writer?.({ node: "self-check", round: entry.round, draft: entry.id, selfScore: record.selfScore });
        return {
          ...entry,
          checked: true,
          selfScore: record.selfScore,
          behaviour: record.behaviour,
          appearance: record.appearance,
          findings: record.findings.length,
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
