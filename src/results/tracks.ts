/**
 * The labelled tracks a result can belong to, and the words every record and report uses
 * for them. A track whose generator saw something of the task's truth is never averaged
 * or cached with the usual one, and says so wherever its numbers appear.
 */

/** Which feedback an agent ran with: its own self-check (from the task's inputs), or the fixed evaluator's verdict. */
export const AGENT_FEEDBACK_KINDS = ["self-check", "oracle"] as const;
export type AgentFeedbackKind = (typeof AGENT_FEEDBACK_KINDS)[number];

/** How records, tables and reports name the agent with oracle feedback. */
export const ORACLE_FEEDBACK_LABEL = "oracle feedback (uses the task's truth)";

/** An experiment arm's kind as reports show it: an agent arm with oracle feedback says so. */
export function armKindLabel(kind: string, feedback: AgentFeedbackKind | undefined): string {
  return kind === "agent" && feedback === "oracle" ? `agent, ${ORACLE_FEEDBACK_LABEL}` : kind;
}
