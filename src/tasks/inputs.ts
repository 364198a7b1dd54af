/**
 * What a generator may see of a task (docs/protocol.md §1–2): the video, the asset sheets
 * and assets, the resolution; and the benchmark's action vocabulary and assets
 * placeholder, which a generator may name. Nothing here reveals the trajectory, the
 * assertions or the checkpoints (those are `TaskTruth`, in schema.ts): this is the one
 * module of src/tasks/ that agents/ imports.
 */
import { z } from "zod";

/** The four kinds of action a trajectory is made of. */
export const ACTION_TYPES = ["Click", "Type", "Scroll", "Press"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** The benchmark's placeholder for the assets folder in generated pages. */
export const ASSET_PLACEHOLDER = "__PLACEHOLDER_ASSETS_BASE_DIR__";

export interface Resolution {
  width: number;
  height: number;
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

/**
 * TaskInputs as a zod object: a graph's `inputs` channel. zod strips any field that is
 * not one of these, so nothing smuggled in at run time reaches a generator's state.
 */
export const TaskInputsSchema = z.object({
  id: z.number().int().nonnegative(),
  videoPath: z.string().min(1),
  assetSheetPaths: z.array(z.string()).readonly(),
  assetsDir: z.string().min(1),
  assetFiles: z.array(z.string()).readonly(),
  resolution: z.object({ width: z.number().int().positive(), height: z.number().int().positive() }),
});

/** Exactly TaskInputs' fields, copied: what a graph's `inputs` channel receives. */
export function stateInputs(inputs: TaskInputs): z.input<typeof TaskInputsSchema> {
  return {
    id: inputs.id,
    videoPath: inputs.videoPath,
    assetSheetPaths: [...inputs.assetSheetPaths],
    assetsDir: inputs.assetsDir,
    assetFiles: [...inputs.assetFiles],
    resolution: { width: inputs.resolution.width, height: inputs.resolution.height },
  };
}
