/**
 * The analysis' storyboard: what the recording shows, as the analyze node's model
 * describes it, validated before it enters the run (a model that answers garbage gets a
 * recorded error, not a half-read storyboard).
 */
import { z } from "zod";
import { ACTION_TYPES } from "../../src/tasks/inputs.ts";
import type { AgentActionSchema } from "./state.ts";

const text = z.string().trim().min(1);

export const StoryboardSchema = z.object({
  regions: z.array(z.object({ name: text, description: z.string() })).default([]),
  texts: z.array(z.string()).default([]),
  assets: z.array(z.object({ file: text, where: z.string() })).default([]),
  states: z.array(z.object({ index: z.number().int().nonnegative(), atSec: z.number().nonnegative(), description: z.string() })).default([]),
  actions: z
    .array(
      z.object({
        type: z.enum(ACTION_TYPES),
        target: text,
        text: z.string().optional().nullable(),
        key: z.string().optional().nullable(),
        effect: z.string().default(""),
      }),
    )
    .default([]),
});
export type Storyboard = z.infer<typeof StoryboardSchema>;

/** The storyboard's actions as the self-check replays them. */
export function actionsOfStoryboard(storyboard: Storyboard): Array<z.infer<typeof AgentActionSchema>> {
  return storyboard.actions.map((action) => ({
    type: action.type,
    description: action.target,
    ...(action.type === "Type" && action.text ? { text: action.text } : {}),
    ...(action.type === "Press" && action.key ? { key: action.key } : {}),
  }));
}
