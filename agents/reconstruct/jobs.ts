/**
 * The payloads of the parallel branches (LangGraph `Send`): one job per draft asked for.
 * A branch sees only its job, so a job carries what its node needs, by path and hash.
 */
import { Send } from "@langchain/langgraph";
import { z } from "zod";
import { TaskInputsSchema } from "../../src/tasks/inputs.ts";
import { AgentSettingsSchema } from "./settings.ts";
import { type AgentValues, FrameRefSchema, type StoredFile, StoredFileSchema } from "./state.ts";

export const DraftJobSchema = z.object({
  id: z.number().int().nonnegative(),
  round: z.number().int().nonnegative(),
  branch: z.number().int().nonnegative(),
  inputs: TaskInputsSchema,
  settings: AgentSettingsSchema,
  frames: z.array(FrameRefSchema),
  sheets: z.array(StoredFileSchema),
  storyboard: StoredFileSchema.optional(),
  /** Revise only: the draft revised, its page, and what to fix (markdown, in the store). */
  parent: z.number().int().nonnegative().optional(),
  parentPage: StoredFileSchema.optional(),
  problems: StoredFileSchema.optional(),
});
export type DraftJob = z.infer<typeof DraftJobSchema>;

const nextDraftId = (state: Pick<AgentValues, "drafts">) => state.drafts.reduce((next, draft) => Math.max(next, draft.id + 1), 0);

function baseJob(state: AgentValues, branch: number, round: number): DraftJob {
  return {
    id: nextDraftId(state) + branch,
    round,
    branch,
    inputs: state.inputs,
    settings: state.settings,
    frames: state.frames,
    sheets: state.sheets,
    ...(state.analysis?.storyboard ? { storyboard: state.analysis.storyboard } : {}),
  };
}

/** The first drafts: `breadth` of them. */
export function draftSends(state: AgentValues): Send[] {
  return Array.from({ length: state.settings.breadth }, (_, branch) => new Send("draft", baseJob(state, branch, 0)));
}

/** The next round's revisions of the best draft: `breadth` of them. */
export function reviseSends(state: AgentValues, problems: StoredFile): Send[] {
  const best = state.drafts.find((draft) => draft.id === state.bestDraftId);
  const round = state.round + 1;
  return Array.from(
    { length: state.settings.breadth },
    (_, branch) =>
      new Send("revise", {
        ...baseJob(state, branch, round),
        ...(best ? { parent: best.id } : {}),
        ...(best?.page ? { parentPage: best.page } : {}),
        problems,
      }),
  );
}
