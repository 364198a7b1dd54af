/**
 * State of the reconstruction agent: one zod StateSchema.
 *
 * It holds the task's inputs (TaskInputs' fields only: nothing of a task's truth), paths,
 * hashes, scores and usage — never image data or pages. Frames, screenshots, pages,
 * the storyboard and critiques live on disk, content-addressed (store.ts): a checkpoint
 * row stays a few kilobytes however many rounds run (image data in state is how
 * checkpoint databases grow to gigabytes).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { ErrorRecordSchema, IwrError, toErrorRecord } from "../../src/errors.ts";
import { addUsage, type ModelClient, NO_USAGE, sumUsage, type Usage, UsageSchema } from "../../src/models/index.ts";
import { ACTION_TYPES, TaskInputsSchema } from "../../src/tasks/inputs.ts";
import { isModelClient } from "../single-pass/state.ts";
import type { FeedbackProvider } from "./feedback.ts";
import { AgentSettingsSchema } from "./settings.ts";

/** A file in the run's content-addressed store. */
export const StoredFileSchema = z.object({ path: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) });
export type StoredFile = z.infer<typeof StoredFileSchema>;

export const FrameRefSchema = StoredFileSchema.extend({ timeSec: z.number().nonnegative() });

/** An action to replay, as the self-check takes it. */
export const AgentActionSchema = z.object({
  type: z.enum(ACTION_TYPES),
  description: z.string(),
  text: z.string().optional(),
  key: z.string().optional(),
});

export const DraftSchema = z.object({
  /** 0, 1, 2, ... in the order drafts were asked for; `iterations/<id>/` on disk. */
  id: z.number().int().nonnegative(),
  /** 0 for the first drafts, n for the n-th critique-and-revise round. */
  round: z.number().int().nonnegative(),
  branch: z.number().int().nonnegative(),
  /** The draft this one revised. */
  parent: z.number().int().nonnegative().optional(),
  origin: z.enum(["draft", "revise", "revise-edits", "revise-edits-fallback"]),
  /** The page with the assets placeholder kept (the store's copy); absent when the model gave none. */
  page: StoredFileSchema.optional(),
  requestHashes: z.array(z.string()),
  usage: UsageSchema,
  error: ErrorRecordSchema.optional(),
  /** Filled by self-check. */
  checked: z.boolean().default(false),
  selfScore: z.number().min(0).max(1).optional(),
  behaviour: z.number().optional(),
  appearance: z.number().optional(),
  findings: z.number().int().nonnegative().optional(),
  selfCheckMs: z.number().nonnegative().optional(),
  /** When the self-check ran (epoch ms): drafts of one round are checked at once. */
  selfCheckSpan: z.object({ startMs: z.number(), endMs: z.number() }).optional(),
  /** Edits: how many applied (revise "edits"). */
  edits: z.object({ proposed: z.number().int(), applied: z.number().int(), failed: z.array(z.string()) }).optional(),
});
export type Draft = z.infer<typeof DraftSchema>;

/** Drafts are appended by draft/revise and updated in place by self-check: merged by id. */
const draftsChannel = new ReducedValue(
  z.array(DraftSchema).default(() => []),
  {
    reducer: (current: Draft[], update: Draft[]) => {
      const merged = new Map(current.map((draft) => [draft.id, draft]));
      for (const draft of update) merged.set(draft.id, { ...merged.get(draft.id), ...draft });
      return [...merged.values()].sort((a, b) => a.id - b.id);
    },
  },
);

const usageChannel = new ReducedValue(
  z.record(z.string(), UsageSchema).default(() => ({})),
  {
    reducer: (current: Record<string, Usage>, update: Record<string, Usage>) => {
      const merged = { ...current };
      for (const [node, usage] of Object.entries(update)) merged[node] = addUsage(merged[node] ?? NO_USAGE, usage);
      return merged;
    },
  },
);

const promptsChannel = new ReducedValue(
  z.record(z.string(), z.string()).default(() => ({})),
  {
    reducer: (current: Record<string, string>, update: Record<string, string>) => ({ ...current, ...update }),
  },
);

export const AnalysisSchema = z.object({
  storyboard: StoredFileSchema.optional(),
  /** The actions the storyboard inferred (what an inferred-trajectory self-check replays). */
  inferredActions: z.array(AgentActionSchema),
  error: ErrorRecordSchema.optional(),
});

export const CritiqueSchema = z.object({
  round: z.number().int().positive(),
  /** The defects as JSON in the store (what revise reads). */
  defects: StoredFileSchema.optional(),
  defectCount: z.number().int().nonnegative(),
  /** The (video frame, screenshot) pairs shown to the critic. */
  pairs: z.number().int().nonnegative(),
  error: ErrorRecordSchema.optional(),
});

export const STOP_REASONS = ["max-iterations", "token-budget", "cost-budget", "wall-time", "no-improvement", "no-findings", "no-page"] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export const AgentState = new StateSchema({
  inputs: TaskInputsSchema,
  settings: AgentSettingsSchema,
  /** Trajectory "given" only: the task line's action descriptions (never its assertions or checkpoints). */
  givenActions: z.array(AgentActionSchema).optional(),
  /** When the run began (wall-time budget; kept across a resume). */
  startedAtMs: z.number().optional(),
  frames: z.array(FrameRefSchema).default(() => []),
  sheets: z.array(StoredFileSchema).default(() => []),
  /** The video's stable states (time spans), the candidates the analysis names. */
  videoStates: z.array(z.object({ index: z.number().int(), startSec: z.number(), endSec: z.number() })).default(() => []),
  analysis: AnalysisSchema.optional(),
  /** What the self-check replays: the inferred actions, or the given ones. */
  actions: z.array(AgentActionSchema).default(() => []),
  drafts: draftsChannel,
  bestDraftId: z.number().int().nonnegative().optional(),
  /** Completed critique-and-revise rounds. */
  round: z.number().int().nonnegative().default(0),
  roundsWithoutImprovement: z.number().int().nonnegative().default(0),
  latestCritique: CritiqueSchema.optional(),
  usageByNode: usageChannel,
  promptHashes: promptsChannel,
  stopReason: z.enum(STOP_REASONS).optional(),
});
export type AgentValues = typeof AgentState.State;
export type AgentUpdate = typeof AgentState.Update;

/** What a caller gives the graph. */
export const AgentInput = new StateSchema({
  inputs: TaskInputsSchema,
  settings: AgentSettingsSchema,
  givenActions: z.array(AgentActionSchema).optional(),
});

/** Run-time parts, not task data: passed as LangGraph `context`, never checkpointed. */
export interface AgentContext {
  /** Drafts and revisions. */
  drafter: ModelClient;
  /** Analysis and critique (the same client as drafter unless --critic-model). */
  critic: ModelClient;
  /** The agent's folder: store/ and iterations/ go here. */
  workDir: string;
  /** What the self-check node asks about each new draft (feedback.ts): normally the self-check. */
  feedback: FeedbackProvider;
  /** Where the video's stable states are cached (default: the media cache's own). */
  statesCacheDir?: string;
}

const RUN_PARTS = ["drafter", "critic", "workDir", "feedback"] as const;

/**
 * The run-time parts (drafter, critic, workDir, feedback), given all together by the CLI,
 * the experiment runner and the tests; or, from LangGraph Studio's dev server, none of
 * them and at most the model names `model` and `criticModel` (names, not clients, given
 * as the run's context through the dev server's API; `{}` or none is fine), from which
 * studio.ts builds the parts. A context with some of the parts but not all is refused.
 */
export const AgentContextSchema = z
  .object({
    drafter: z.custom<ModelClient>(isModelClient, { message: "expected a ModelClient (createModelClient)" }).optional(),
    critic: z.custom<ModelClient>(isModelClient, { message: "expected a ModelClient (createModelClient)" }).optional(),
    workDir: z.string().min(1).optional(),
    feedback: z.custom<FeedbackProvider>((value) => typeof value === "function", { message: "expected a feedback provider (a function)" }).optional(),
    statesCacheDir: z.string().min(1).optional(),
    model: z
      .string()
      .min(1)
      .optional()
      .describe("Studio runs: the drafting model, a preset, a model YAML file or a model id at OPENAI_BASE_URL (default: IWR_AGENT_MODEL, else gpt-4o)"),
    criticModel: z.string().min(1).optional().describe("Studio runs: the analysis and critique model (default: the drafting model)"),
  })
  .superRefine((context, issues) => {
    const missing = RUN_PARTS.filter((part) => context[part] === undefined);
    if (missing.length > 0 && missing.length < RUN_PARTS.length)
      issues.addIssue({ code: "custom", message: `a run context needs all of ${RUN_PARTS.join(", ")}; missing: ${missing.join(", ")}` });
  });
type GivenContext = z.infer<typeof AgentContextSchema>;

/** What a Studio run's context names. */
export type StudioContext = Pick<GivenContext, "model" | "criticModel">;

export type AgentConfig = LangGraphRunnableConfig<GivenContext>;

/** Builds the run-time parts for a run that brings only a Studio context; see studio.ts. */
type ContextFallback = (studio: StudioContext, config: AgentConfig) => Promise<AgentContext>;
let contextFallback: ContextFallback | undefined;

export function setAgentContextFallback(factory: ContextFallback | undefined): void {
  contextFallback = factory;
}

export async function agentContextOf(config: AgentConfig): Promise<AgentContext> {
  const context: GivenContext = config.context ?? {};
  const { drafter, critic, workDir, feedback, statesCacheDir } = context;
  if (drafter && critic && workDir && feedback) return { drafter, critic, workDir, feedback, ...(statesCacheDir ? { statesCacheDir } : {}) };
  if (contextFallback && RUN_PARTS.every((part) => context[part] === undefined))
    return contextFallback({ model: context.model, criticModel: context.criticModel }, config);
  throw new IwrError("CONFIG_INVALID", "reconstruction graph invoked without its context ({ drafter, critic, workDir, feedback })");
}

/** A progress event of the custom stream mode. */
export interface AgentProgressEvent {
  node: string;
  round: number;
  draft?: number;
  selfScore?: number;
  bestSelfScore?: number;
  /** Spending so far (select's events carry it). */
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  message?: string;
}

/** The record of a draft whose model call failed (after the model layer's retries). */
export function failedDraft(job: { id: number; round: number; branch: number; parent?: number | undefined }, origin: Draft["origin"], error: unknown): Draft {
  return {
    id: job.id,
    round: job.round,
    branch: job.branch,
    ...(job.parent !== undefined ? { parent: job.parent } : {}),
    origin,
    requestHashes: [],
    usage: NO_USAGE,
    error: toErrorRecord(error),
    checked: false,
  };
}

export function totalUsage(usageByNode: Readonly<Record<string, Usage>>): Usage {
  return sumUsage(Object.values(usageByNode));
}
