/**
 * State of the single-pass generator: the task's inputs go in, the prepared request,
 * the model's reply and the page (or the reason there is none) come out.
 *
 * The graph's input schema holds `inputs` and nothing else, and `inputs` is a zod
 * object of exactly TaskInputs' fields: a caller cannot hand the generator a task's
 * truth by type, and any extra field smuggled in at run time is stripped by zod.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { ErrorRecordSchema, IwrError } from "../../src/errors.ts";
import type { ModelClient } from "../../src/models/index.ts";
import { PROTOCOL_PROFILES, type ProtocolProfile } from "../../src/protocol.ts";
import { TaskInputsSchema } from "../../src/tasks/inputs.ts";

export const PreparedImageSchema = z.object({
  kind: z.enum(["sheet", "frame"]),
  /** The PNG on disk, by content (src/media/image-store.ts): state holds no image data. */
  path: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Sheet file name, or the frame's moment in the video ("t=12.50s"). */
  label: z.string(),
});
export type PreparedImage = z.infer<typeof PreparedImageSchema>;

export const ImageCountsSchema = z.object({
  sheets: z.number().int().nonnegative(),
  frames: z.number().int().nonnegative(),
  /** Frames the caps left out (they are thinned evenly, see selectImages). */
  framesDropped: z.number().int().nonnegative(),
});

export const RenderedPromptSchema = z.object({ name: z.string(), text: z.string(), hash: z.string() });

export const ModelReplySchema = z.object({
  text: z.string(),
  usage: z.object({ inputTokens: z.number().nonnegative(), outputTokens: z.number().nonnegative() }),
  costUsd: z.number().nonnegative(),
  latencyMs: z.number().nonnegative(),
  cacheHit: z.boolean(),
  requestHash: z.string(),
});

export const SinglePassState = new StateSchema({
  inputs: TaskInputsSchema,
  prompt: RenderedPromptSchema.optional(),
  images: z.array(PreparedImageSchema).default(() => []),
  imageCounts: ImageCountsSchema.optional(),
  /** Relative path from the output folder to the task's assets (what the placeholder becomes). */
  assetsBase: z.string().optional(),
  reply: ModelReplySchema.optional(),
  /** The page to save, post-processed. */
  html: z.string().optional(),
  /** Why there is no page although the model answered (the reply is kept beside it). */
  failure: ErrorRecordSchema.optional(),
});
export type SinglePassValues = typeof SinglePassState.State;
export type SinglePassUpdate = typeof SinglePassState.Update;

/** What a caller may give the graph: a task's inputs, nothing more. */
export const SinglePassInput = new StateSchema({ inputs: TaskInputsSchema });

/** Run-time settings, not task data: passed as LangGraph `context`, never stored in state. */
export interface SinglePassContext {
  model: ModelClient;
  /** Folder index.html will be written to (the placeholder resolves relative to it). */
  outputDir: string;
  /** A prompt variant's template file instead of prompts/generate.md (same variables). */
  promptFile?: string;
  /**
   * Which sample of this request (a repeat at temperature > 0): part of the cache key, so
   * repeat 2 is a new answer, not a replay of the first. 0 or absent for the first.
   */
  sample?: number;
  /** The protocol profile's generation rules (frames, image cap, reply post-processing); default corrected. */
  protocol?: ProtocolProfile;
}

export const isModelClient = (value: unknown): value is ModelClient =>
  typeof value === "object" && value !== null && "invoke" in value && typeof value.invoke === "function" && "spec" in value;

export const SinglePassContextSchema = z.object({
  model: z.custom<ModelClient>(isModelClient, { message: "expected a ModelClient (createModelClient)" }),
  outputDir: z.string().min(1),
  promptFile: z.string().min(1).optional(),
  sample: z.number().int().nonnegative().optional(),
  protocol: z.enum(PROTOCOL_PROFILES).optional(),
});

export type SinglePassConfig = LangGraphRunnableConfig<SinglePassContext>;

/** The run's context, or a clear error when a caller forgot it. */
export function contextOf(config: SinglePassConfig): SinglePassContext {
  const context = config.context;
  if (!context) throw new IwrError("CONFIG_INVALID", "single-pass graph invoked without its context ({ model, outputDir })");
  return context;
}
