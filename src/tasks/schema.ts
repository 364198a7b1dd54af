/**
 * The benchmark's task line (docs/protocol.md §1) as zod schemas, and the split of a
 * loaded task into what a generator may see (`TaskInputs`) and what only the
 * evaluator may see (`TaskTruth`).
 *
 * Objects are `loose`: the official dataset may carry fields we do not use, and a
 * loader that reads it "unchanged" must not reject them. The schema accepts every line
 * the harness accepts (it reads only id, resolution, type, parameters, logical_assertion
 * and visual_evaluation_flag), with the harness's defaults: a missing flag is false, a
 * null assertion is empty, a Type action's text may live only in its description, the
 * classification and the source may be absent, and so may the resolution (the loader
 * then falls back as the harness does, or refuses, by profile). What we would like but
 * do not need is a warning (`lineWarnings`), listed apart from errors.
 */
import { z } from "zod";
import { type Determinism, MAX_RANDOM_SEED } from "../browser/determinism.ts";
import { LABEL_MAX_CHARS } from "../browser/key-focus.ts";
import { MAX_VIEWPORT_SIDE } from "../protocol.ts";
import { ACTION_TYPES, type Resolution, type TaskInputs } from "./inputs.ts";

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

/**
 * Ours, not the benchmark's (the harness ignores it): where keyboard focus was when the
 * recorder pressed a Press action's key — the document (`page`), a child frame, or an
 * element (its tag, id and label) — so the replay can give the page focus the same way
 * (src/browser/key-focus.ts).
 */
export const KeyFocusSchema = z.discriminatedUnion("on", [
  z.strictObject({ on: z.literal("page") }),
  z.strictObject({ on: z.literal("frame") }),
  z.strictObject({
    on: z.literal("element"),
    tag: z.string().regex(/^[a-z][a-z0-9-]*$/, { message: "tag must be a lower-case tag name, e.g. 'canvas'" }),
    id: z.string().min(1).optional(),
    label: z.string().min(1).max(LABEL_MAX_CHARS).optional(),
  }),
]);

export const ActionSchema = z.looseObject({
  type: z.enum(ACTION_TYPES),
  parameters: ActionParametersSchema,
  /** The harness skips a null or empty assertion. */
  logical_assertion: z
    .string()
    .nullable()
    .default("")
    .transform((assertion) => assertion ?? ""),
  /** The harness reads a missing flag as false. */
  visual_evaluation_flag: z.boolean().default(false),
  checkpoint_screenshot: z.string().nullable().optional(),
  key_focus: KeyFocusSchema.optional(),
});

export const TaskLineSchema = z
  .looseObject({
    id: z.number().int().nonnegative(),
    classification: z
      .looseObject({
        interaction_complexity: z.enum(INTERACTION_CLASSES).optional(),
        visual_complexity: z.enum(VISUAL_CLASSES).optional(),
        domain: z.string().optional(),
        sub_domain: z.string().optional(),
      })
      .optional(),
    recording_details: z
      .looseObject({
        resolution: ResolutionString.optional(),
        environment: z.string().optional(),
      })
      .optional(),
    source_website: z.string().optional(),
    /**
     * Ours, not the benchmark's (the harness ignores it): the seed of Math.random and the
     * clock start the task was recorded with, so the evaluator can replay it the same way.
     */
    determinism: z
      .strictObject({
        random_seed: z.number().int().min(0).max(MAX_RANDOM_SEED),
        clock_start: z.iso.datetime({ message: "clock_start must be an ISO 8601 UTC time, e.g. '2025-01-15T09:00:00.000Z'" }),
        /** A page recorded under the stepped clock (src/browser/stepped-clock.ts): how far it went, in ms of page time. */
        stepped_clock: z
          .strictObject({
            open_ms: z.number().int().nonnegative(),
            before_action_ms: z.array(z.number().int().nonnegative()),
            after_action_ms: z.array(z.number().int().nonnegative()),
          })
          .optional(),
      })
      .optional(),
    action_sequence: z.array(ActionSchema).min(1, { message: "action_sequence must hold at least one action" }),
  })
  .superRefine((line, context) => {
    const plan = line.determinism?.stepped_clock;
    if (!plan) return;
    for (const key of ["before_action_ms", "after_action_ms"] as const) {
      if (plan[key].length !== line.action_sequence.length) {
        context.addIssue({
          code: "custom",
          path: ["determinism", "stepped_clock", key],
          message: `${key} must hold one entry per action (${line.action_sequence.length}), got ${plan[key].length}`,
        });
      }
    }
  });

/**
 * What a line lacks that the harness does without but a researcher should know, as
 * (field path, message) pairs; read from the raw line, since the schema fills defaults.
 */
export function lineWarnings(raw: unknown): Array<{ path: string; message: string }> {
  if (typeof raw !== "object" || raw === null) return [];
  const line = raw as Record<string, unknown>;
  const warnings: Array<{ path: string; message: string }> = [];
  const record = (value: unknown): Record<string, unknown> | undefined =>
    typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  const classification = record(line.classification);
  if (!classification)
    warnings.push({ path: "classification", message: "missing: the task counts as class 'unknown' in per-class tables and is left out by class filters" });
  else
    for (const key of ["interaction_complexity", "visual_complexity", "domain"])
      if (classification[key] === undefined) warnings.push({ path: `classification.${key}`, message: "missing ('unknown' in reports)" });
  if (line.source_website === undefined) warnings.push({ path: "source_website", message: "missing ('unknown' in reports)" });
  const actions = Array.isArray(line.action_sequence) ? line.action_sequence : [];
  actions.forEach((value, index) => {
    const action = record(value);
    if (!action) return;
    if (!("visual_evaluation_flag" in action))
      warnings.push({ path: `action_sequence[${index}].visual_evaluation_flag`, message: "missing: read as false, as the harness does" });
    if (action.logical_assertion === null)
      warnings.push({ path: `action_sequence[${index}].logical_assertion`, message: "null: no assertion is judged for this action" });
    const parameters = record(action.parameters);
    if (action.type === "Type" && parameters && parameters.text === undefined) {
      warnings.push({
        path: `action_sequence[${index}].parameters.text`,
        message: "missing: the text to type is read from the description (by the grounding model, or the first quoted string for the heuristic grounding)",
      });
    }
  });
  return warnings;
}

export type Action = z.infer<typeof ActionSchema>;
export type TaskLine = z.infer<typeof TaskLineSchema>;

export function parseResolution(text: string): Resolution {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (!match) throw new Error(`resolution must be 'WIDTHxHEIGHT', got '${text}'`);
  return { width: Number(match[1]), height: Number(match[2]) };
}

/** What only the evaluator may see. */
export interface TaskTruth {
  readonly id: number;
  readonly actions: readonly Action[];
  /** `checkpoints/step_<k>.png` by k: index 0 is the initial state. */
  readonly checkpointPaths: readonly string[];
  /**
   * The reference state around every action, when the task has them (recorded with
   * `states/`; absent for the benchmark's own tasks and older recordings): index i is
   * the page at rest after action i (`states/action_<i>.png`), index 0 the initial state
   * (`checkpoints/step_0.png`). n + 1 entries for n actions.
   */
  readonly actionStatePaths?: readonly string[];
  /** The seed and clock start of the recording, when the line names them (deterministic mode). */
  readonly determinism?: Determinism;
}

/** A class, domain or source the line does not state. */
export const UNKNOWN_CLASS = "unknown";

export interface TaskMeta {
  readonly id: number;
  readonly interactionComplexity: (typeof INTERACTION_CLASSES)[number] | typeof UNKNOWN_CLASS;
  readonly visualComplexity: (typeof VISUAL_CLASSES)[number] | typeof UNKNOWN_CLASS;
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
export function expectedCheckpointCount(actions: readonly { visual_evaluation_flag?: boolean | undefined }[]): number {
  return 1 + actions.filter((action) => action.visual_evaluation_flag).length;
}
