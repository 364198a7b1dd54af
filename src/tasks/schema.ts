/**
 * The benchmark's task line (IWR-PROTOCOL.md §1) as zod schemas, and the split of a
 * loaded task into what a generator may see (`TaskInputs`) and what only the
 * evaluator may see (`TaskTruth`).
 *
 * Objects are `loose`: the official dataset may carry fields we do not use, and a
 * loader that reads it "unchanged" must not reject them.
 */
import { z } from "zod";
import { MAX_VIEWPORT_SIDE } from "../protocol.ts";

export const ACTION_TYPES = ["Click", "Type", "Scroll", "Press"] as const;
export const INTERACTION_CLASSES = ["L1", "L2", "L3", "L4"] as const;
export const VISUAL_CLASSES = ["V1", "V2", "V3", "V4"] as const;

export const ResolutionString = z.string().superRefine((text, ctx) => {
  if (!/^[1-9]\d{1,4}x[1-9]\d{1,4}$/.test(text)) {
    ctx.addIssue({ code: "custom", message: "resolution must be 'WIDTHxHEIGHT', e.g. '1280x720'" });
  } else if (text.split("x").some((side) => Number(side) > MAX_VIEWPORT_SIDE)) {
    ctx.addIssue({ code: "custom", message: `resolution: each side must be at most ${MAX_VIEWPORT_SIDE} px (the largest page the evaluator opens)` });
  }
});

export const ActionParametersSchema = z.looseObject({
  description: z.string().min(1, { message: "description must not be empty" }),
  text: z.string().optional(),
  key: z.string().optional(),
  direction: z.string().optional(),
  scroll_page: z.union([z.boolean(), z.number(), z.string()]).optional(),
});

export const ActionSchema = z
  .looseObject({
    type: z.enum(ACTION_TYPES),
    parameters: ActionParametersSchema,
    logical_assertion: z.string().default(""),
    visual_evaluation_flag: z.boolean(),
    checkpoint_screenshot: z.string().nullable().optional(),
  })
  .superRefine((action, ctx) => {
    if (action.type === "Type" && action.parameters.text === undefined) {
      ctx.addIssue({ code: "custom", path: ["parameters", "text"], message: "a Type action needs parameters.text" });
    }
  });

export const TaskLineSchema = z.looseObject({
  id: z.number().int().nonnegative(),
  classification: z.looseObject({
    interaction_complexity: z.enum(INTERACTION_CLASSES),
    visual_complexity: z.enum(VISUAL_CLASSES),
    domain: z.string(),
    sub_domain: z.string().optional(),
  }),
  recording_details: z.looseObject({
    resolution: ResolutionString,
    environment: z.string().optional(),
  }),
  source_website: z.string(),
  action_sequence: z.array(ActionSchema).min(1, { message: "action_sequence must hold at least one action" }),
});

export type Action = z.infer<typeof ActionSchema>;
export type ActionType = (typeof ACTION_TYPES)[number];
export type TaskLine = z.infer<typeof TaskLineSchema>;

export interface Resolution {
  width: number;
  height: number;
}

export function parseResolution(text: string): Resolution {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (!match) throw new Error(`resolution must be 'WIDTHxHEIGHT', got '${text}'`);
  return { width: Number(match[1]), height: Number(match[2]) };
}

/** What a generator may see. Nothing here reveals the trajectory or the checkpoints. */
export interface TaskInputs {
  readonly id: number;
  readonly videoPath: string;
  /** Contact sheets, `stitched_image*.png`, in numeric order. */
  readonly assetSheetPaths: readonly string[];
  /** The task's `assets/` folder (the placeholder resolves to it). */
  readonly assetsDir: string;
  /** File names inside `assetsDir`, sorted. */
  readonly assetFiles: readonly string[];
  readonly resolution: Resolution;
}

/** What only the evaluator may see. */
export interface TaskTruth {
  readonly id: number;
  readonly actions: readonly Action[];
  /** `checkpoints/step_<k>.png` by k: index 0 is the initial state. */
  readonly checkpointPaths: readonly string[];
}

export interface TaskMeta {
  readonly id: number;
  readonly interactionComplexity: TaskLine["classification"]["interaction_complexity"];
  readonly visualComplexity: TaskLine["classification"]["visual_complexity"];
  readonly domain: string;
  readonly subDomain?: string;
  readonly sourceWebsite: string;
}

export interface Task {
  readonly id: number;
  /** `<name>/<id>/`: the task's folder. */
  readonly dir: string;
  /** `<name>/`: the task set's folder; every file of the task resolves inside it. */
  readonly setDir: string;
  readonly line: TaskLine;
  readonly meta: TaskMeta;
  readonly inputs: TaskInputs;
  readonly truth: TaskTruth;
}

/** Number of reference checkpoints a task needs: the initial state plus one per flagged action. */
export function expectedCheckpointCount(actions: readonly Pick<Action, "visual_evaluation_flag">[]): number {
  return 1 + actions.filter((action) => action.visual_evaluation_flag).length;
}

/** The benchmark's placeholder for the assets folder in generated pages. */
export const ASSET_PLACEHOLDER = "__PLACEHOLDER_ASSETS_BASE_DIR__";
