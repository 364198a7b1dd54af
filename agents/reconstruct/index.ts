/**
 * The reconstruction agent on one task: TaskInputs (and, in the "given" track, the task
 * line's action descriptions) in; the best draft, every draft's record and the stop
 * reason out.
 *
 * Checkpoints go to `<agent folder>/agent.sqlite` (LangGraph's SQLite saver), one thread
 * per task and settings, each superstep made durable before the next (`durability:
 * "sync"`): `resume` continues an interrupted run from its last completed node, and a
 * finished node's model calls are not sent again. `shouldStop` is asked after each node
 * finishes; when it says so, the run stops there, its checkpoint kept for a resume.
 * `signal` is the hard stop: it cancels the node in flight (its model call, its page), and
 * the run ends at the last completed node's checkpoint, as a stopped one.
 */
import fs from "node:fs";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { agentWorkFiles } from "../../src/results/layout.ts";
import { stateInputs, type TaskInputs } from "../../src/tasks/inputs.ts";
import { buildReconstructionGraph } from "./graph.ts";
import { type AgentSettingsInput, AgentSettingsSchema, recursionLimitFor, settingsHash } from "./settings.ts";
import type { AgentContext, AgentProgressEvent, AgentValues } from "./state.ts";

export type { FeedbackProvider } from "./feedback.ts";
export { graphAsText } from "./graph.ts";
export { writePageTo } from "./pages.ts";
export { selfCheckFeedback } from "./self-check-feedback.ts";
export { type AgentSettings, type AgentSettingsInput, AgentSettingsSchema, settingsHash } from "./settings.ts";
export type { AgentContext, AgentProgressEvent, AgentValues } from "./state.ts";
export { totalUsage } from "./state.ts";

export interface AgentRunOptions {
  settings: AgentSettingsInput;
  /** Trajectory "given": the line's action descriptions (type, description, text, key) and nothing else. */
  givenActions?: ReadonlyArray<{ type: "Click" | "Type" | "Scroll" | "Press"; description: string; text?: string; key?: string }>;
  /** Continue from the last checkpoint of the same task and settings (else start afresh). */
  resume?: boolean;
  /** Asked after each node: true stops the run there (checkpoint kept). */
  shouldStop?: () => boolean;
  onProgress?: (event: AgentProgressEvent) => void;
  /** Cancels a node's model call and page at once (a hard stop). */
  signal?: AbortSignal;
}

export interface AgentRunOutcome {
  state: AgentValues;
  /** True when the graph reached END; false when stopped by `shouldStop`. */
  finished: boolean;
  threadId: string;
  checkpoint: { rows: number; largestBytes: number; totalBytes: number };
}

function checkpointSizes(saver: SqliteSaver, threadId: string): AgentRunOutcome["checkpoint"] {
  const row = saver.db
    .prepare(
      "SELECT COUNT(*) AS rows, COALESCE(MAX(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS largest, " +
        "COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS total FROM checkpoints WHERE thread_id = ?",
    )
    .get(threadId) as { rows: number; largest: number; total: number };
  return { rows: row.rows, largestBytes: row.largest, totalBytes: row.total };
}

export async function runReconstructionAgent(inputs: TaskInputs, context: AgentContext, options: AgentRunOptions): Promise<AgentRunOutcome> {
  const settings = AgentSettingsSchema.parse(options.settings);
  const files = agentWorkFiles(context.workDir);
  fs.mkdirSync(files.dir, { recursive: true });
  const threadId = `task-${inputs.id}-${settingsHash(settings)}`;
  if (!options.resume) {
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(`${files.checkpoints}${suffix}`, { force: true });
  }
  const saver = SqliteSaver.fromConnString(files.checkpoints);
  try {
    const graph = buildReconstructionGraph({ checkpointer: saver });
    const config = {
      configurable: { thread_id: threadId },
      // This run brings its parts; LangGraph's context type lists every schema key, the Studio-only names included.
      context: { ...context, statesCacheDir: context.statesCacheDir, model: undefined, criticModel: undefined },
      recursionLimit: recursionLimitFor(settings),
      streamMode: ["updates", "custom"] as ("updates" | "custom")[],
      durability: "sync" as const,
      ...(options.signal ? { signal: options.signal } : {}),
    };
    const existing = options.resume ? await graph.getState({ configurable: { thread_id: threadId } }) : undefined;
    const resuming = existing !== undefined && existing.next.length > 0;
    const alreadyDone = existing !== undefined && existing.next.length === 0 && existing.values.stopReason !== undefined;
    let stopped = false;
    if (!alreadyDone) {
      const input = resuming
        ? null
        : {
            inputs: stateInputs(inputs),
            settings,
            ...(settings.trajectory === "given" && options.givenActions ? { givenActions: options.givenActions.map((action) => ({ ...action })) } : {}),
          };
      try {
        const stream = await graph.stream(input, config);
        for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
          if (mode === "custom") options.onProgress?.(chunk as AgentProgressEvent);
          else if (options.shouldStop?.()) {
            stopped = true;
            break;
          }
        }
      } catch (error) {
        // Cancelled by the hard stop: the node in flight is dropped, every completed one is in the checkpoint.
        if (!options.signal?.aborted) throw error;
        stopped = true;
      }
    }
    const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
    return { state: snapshot.values as AgentValues, finished: !stopped && snapshot.next.length === 0, threadId, checkpoint: checkpointSizes(saver, threadId) };
  } finally {
    saver.db.close();
  }
}
