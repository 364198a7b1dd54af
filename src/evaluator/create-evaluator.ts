import { defaultPageMemoryLimitMiB, type HostTimeouts } from "../browser/host.ts";
import { closeSharedBrowser } from "../browser/launch.ts";
import { ocrPoolSizeFor, setOcrPoolSize } from "../metrics/ocr.ts";
import { createModelClient, loadModelSpec, type ModelClient, type ModelSpec, openResponseCache, preflightModel } from "../models/index.ts";
import { type ProtocolProfile, profileRules } from "../protocol.ts";
import { createGrounder, type GrounderKind } from "../replay/grounding/index.ts";
import type { Evaluator } from "./evaluate-task.ts";
import { createAssertionJudge, type JudgeKind } from "./judge/index.ts";
import { createClientJudge } from "./mllm-judge-client.ts";
import { createPageSlots } from "./task-pipeline.ts";
import { createVisualScorers, shutdownVisualScorers, type VisualScorers } from "./visual-scorers.ts";

export interface EvaluatorChoice {
  /** The protocol profile (default corrected; the CLI defaults to official). */
  profile?: ProtocolProfile;
  judge: JudgeKind;
  grounding: GrounderKind;
  /** The model behind the `llm` judges (assertion, MLLM visual) and, unless groundingModel is given, the grounding. Default gpt-4o, the harness's. */
  judgeModel?: string;
  /** The grounding's model when it differs from the judges' (the harness's OPENAI_MODEL_NAME beside MODEL_FOR_EVAL). */
  groundingModel?: string;
  baseURL?: string;
  /** Model response cache folder; responses are cached read-write there when given. */
  cacheDir?: string;
  hostTimeouts?: Partial<HostTimeouts>;
  /** Save trace.zip beside each replay (default true). */
  trace?: boolean;
  /** An already-built client for the `llm` parts (tests, or callers sharing one). */
  client?: ModelClient;
  /** Candidate pages replayed at once in this process (default 1); the OCR pool is sized for it. */
  workers?: number;
  /** Each page's memory limit in MiB (default: defaultPageMemoryLimitMiB(workers), IWR_PAGE_MEMORY_MB). */
  pageMemoryMiB?: number;
  /** Judgements per assertion (default 1; the first is scored, the rest show the judge's spread). */
  judgeRepeats?: number;
  /** A folder whose prompt templates replace ours by name (e.g. the harness's own texts); their hashes are recorded. */
  promptsDir?: string;
}

export const DEFAULT_JUDGE_MODEL = "gpt-4o";

/** The model clients of the evaluator's parts; one client for all unless the profile gives each its own limit. */
interface EvaluatorClients {
  grounding?: ModelClient;
  /** The grounding's vision fallback (the harness sends it without a temperature). */
  groundingVision?: ModelClient;
  assertion?: ModelClient;
  visual?: ModelClient;
}

async function evaluatorClients(choice: EvaluatorChoice, rules: ReturnType<typeof profileRules>): Promise<EvaluatorClients> {
  const needsJudge = choice.judge === "llm";
  const needsGrounding = choice.grounding === "llm";
  if (!needsJudge && !needsGrounding) return {};
  // A client handed in (tests, callers sharing one) serves every part as it is.
  if (choice.client) return { grounding: choice.client, groundingVision: choice.client, assertion: choice.client, visual: choice.client };
  const cache = choice.cacheDir ? { cache: openResponseCache(choice.cacheDir, "read-write") } : {};
  const overrides = choice.baseURL ? { baseURL: choice.baseURL } : {};
  const judgeSpec = loadModelSpec(choice.judgeModel ?? DEFAULT_JUDGE_MODEL, overrides);
  // The harness grounds with OPENAI_MODEL_NAME and judges with MODEL_FOR_EVAL: two models when asked.
  const groundingSpec = choice.groundingModel ? loadModelSpec(choice.groundingModel, overrides) : judgeSpec;
  for (const spec of new Set([needsJudge ? judgeSpec : undefined, needsGrounding ? groundingSpec : undefined])) if (spec) await preflightModel(spec);
  const timeouts = rules.modelTimeoutsMs;
  const withLimit = (spec: ModelSpec, timeoutMs: number | undefined, extra: Partial<ModelSpec> = {}) =>
    createModelClient({ ...spec, ...(timeoutMs ? { timeoutMs } : {}), ...extra }, cache);
  return {
    ...(needsGrounding
      ? {
          grounding: withLimit(groundingSpec, timeouts?.grounding),
          groundingVision: withLimit(groundingSpec, timeouts?.grounding, rules.grounding === "harness" ? { temperature: null } : {}),
        }
      : {}),
    ...(needsJudge
      ? {
          assertion: withLimit(judgeSpec, timeouts?.assertion, rules.assertionMaxTokens ? { maxTokens: rules.assertionMaxTokens } : {}),
          visual: withLimit(judgeSpec, timeouts?.visual),
        }
      : {}),
  };
}

/** Builds the evaluator once per process: model clients (checked before any work), judges, OCR/DINO. */
export async function createEvaluator(choice: EvaluatorChoice): Promise<Evaluator> {
  const profile = choice.profile ?? "corrected";
  const rules = profileRules(profile);
  const clients = await evaluatorClients(choice, rules);
  setOcrPoolSize(ocrPoolSizeFor(choice.workers ?? 1));
  const promptsDir = choice.promptsDir ? { promptsDir: choice.promptsDir } : {};
  const scorers: VisualScorers = await createVisualScorers(
    clients.visual ? { judge: createClientJudge(clients.visual, { promptName: rules.prompts.visual, ...promptsDir }) } : {},
  );
  const grounderOptions = {
    ...(clients.grounding ? { client: clients.grounding } : {}),
    ...(clients.groundingVision ? { visionClient: clients.groundingVision } : {}),
    giveTypedText: rules.typeTextToModel === "given",
    parse: rules.grounding,
    ...promptsDir,
  };
  const hostTimeouts = { navigationMs: rules.navigationTimeoutMs, ...choice.hostTimeouts };
  return {
    grounder: createGrounder(choice.grounding, grounderOptions),
    profile,
    judge: createAssertionJudge(choice.judge, {
      ...(clients.assertion ? { client: clients.assertion } : {}),
      maxAttempts: rules.judgeAttempts,
      parse: rules.judgeParse,
      promptName: rules.prompts.assertion,
      ...promptsDir,
    }),
    scorers,
    groundingModel: clients.grounding?.spec.name ?? "none",
    judgeModel: clients.assertion?.spec.name ?? "none",
    hostTimeouts,
    ...(choice.trace === false ? { trace: false } : {}),
    pageMemoryMiB: choice.pageMemoryMiB ?? defaultPageMemoryLimitMiB(choice.workers ?? 1),
    pageSlots: createPageSlots(choice.workers ?? 1),
    ...(choice.judgeRepeats && choice.judgeRepeats > 1 ? { judgeRepeats: choice.judgeRepeats } : {}),
    // The OCR worker pool and the browsers are the process's (one of each per process); closing ends them.
    close: closeEvaluator,
  };
}

/** Ends what createEvaluator started (OCR worker, DINO) and the shared browsers: every evaluator's, for callers holding none (tests, benches). */
export async function closeEvaluator(): Promise<void> {
  await shutdownVisualScorers();
  await closeSharedBrowser();
}
