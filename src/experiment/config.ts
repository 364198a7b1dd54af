/**
 * An experiment's YAML config (`iwr run <config.yaml>`): task file and filters, arms,
 * one evaluator setting for every arm, output folder, concurrency, cache mode, repeats.
 * Validated by zod before any work; every problem names the file, line and key path
 * ("configs/x.yaml:12:11: arms.2.kind: ..."). Relative paths in a config resolve against
 * the config file's folder, so a config means the same from any working directory.
 *
 * Arm kinds:
 *   single-pass         one model answer per task (model, optional prompt variant file)
 *   agent               the reconstruction agent (model, optional critic, any agent switch)
 *   reference, blank    calibration: the task's true page, an empty page
 *   mutant:<operator>   calibration: a near miss of the true page (freeze-after:2, no-script, ...)
 *   module:<path>       a researcher's own generator (see module-arm.ts for the contract)
 *   results:<dir>       pages made elsewhere, evaluated as they are
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { AgentSettingsSchema } from "../../agents/reconstruct/settings.ts";
import { readYamlSource, type YamlSource } from "../config/yaml-source.ts";
import { formatFieldPath } from "../config/zod-issues.ts";
import { errorMessage, quoted } from "../errors.ts";
import { PAIRING_MODES } from "../evaluator/settings.ts";
import { outputFolderProblem } from "../files/output-folder.ts";
import { folderNameProblem } from "../files/safe-name.ts";
import { CACHE_MODES } from "../models/cache.ts";
import { type MutantSpec, parseMutantSpec } from "../mutants/operators.ts";
import { DEFAULT_EXPERIMENT_PROFILE, PROTOCOL_PROFILES, type ProtocolProfile, profileRules } from "../protocol.ts";
import { AGENT_FEEDBACK_KINDS, type AgentFeedbackKind } from "../results/tracks.ts";
import { INTERACTION_CLASSES, VISUAL_CLASSES } from "../tasks/schema.ts";

const FIXED_KINDS = ["single-pass", "agent", "reference", "blank"] as const;

/**
 * Arms in one config at most: a comparison of many more is a sweep of several runs (each
 * arm multiplies the cells, and its name is a folder). With the YAML reader's 1 MiB file
 * limit, this keeps a hostile config from planning millions of cells.
 */
export const MAX_ARMS = 100;
const PREFIXED_KINDS = ["mutant:", "module:", "results:"] as const;

/** A URL, or nothing: an empty value (`\${IWR_BASE_URL:-}` unset) means the default endpoint. */
const optionalURL = z
  .union([z.literal(""), z.string().url()])
  .optional()
  .transform((value) => (value === "" ? undefined : value));

const ArmSchema = z.strictObject({
  /** The arm's name in reports, and its folder: a safe folder name. */
  name: z.string().superRefine((name, context) => {
    const problem = folderNameProblem(name);
    if (problem) context.addIssue({ code: "custom", message: `cannot be used as a folder name: ${problem}` });
  }),
  kind: z.string().superRefine((kind, context) => {
    if ((FIXED_KINDS as readonly string[]).includes(kind)) return;
    const prefix = PREFIXED_KINDS.find((candidate) => kind.startsWith(candidate));
    if (!prefix) {
      context.addIssue({
        code: "custom",
        message: `unknown arm kind ${quoted(kind)}: expected one of ${FIXED_KINDS.join(", ")}, mutant:<operator>, module:<path>, results:<dir>`,
      });
      return;
    }
    const rest = kind.slice(prefix.length);
    if (rest.trim() === "")
      context.addIssue({
        code: "custom",
        message: `${quoted(kind)} names no ${prefix === "mutant:" ? "operator" : prefix === "module:" ? "module file" : "results folder"}`,
      });
    else if (prefix === "mutant:") {
      try {
        parseMutantSpec(rest);
      } catch (error) {
        context.addIssue({ code: "custom", message: errorMessage(error) });
      }
    }
  }),
  /** single-pass and agent: the model (preset, YAML file or model id). results: the model folder inside the results folder. */
  model: z.string().optional(),
  /**
   * single-pass, agent: leave the arm out (with one line saying how to enable it) when
   * `model` is empty, e.g. \`model: \${IWR_MODEL:-}\` with no model configured.
   */
  skipWithoutModel: z.boolean().default(false),
  /** agent: analysis and critique model (default: model). */
  critic: z.string().min(1).optional(),
  /** The model's OpenAI-compatible endpoint (default: the preset's, or OPENAI_BASE_URL); empty = the default. */
  baseURL: optionalURL,
  /** single-pass: a prompt variant file (same variables as prompts/generate.md). */
  prompt: z.string().min(1).optional(),
  /** single-pass: the model's sampling temperature for this arm. */
  temperature: z.number().min(0).max(2).optional(),
  /**
   * agent: every switch of the agent graph (agents/reconstruct/settings.ts), and its
   * feedback: `self-check` (the default) or `oracle`, the fixed evaluator's verdict on each
   * draft — the task's truth, a separate track labelled "oracle feedback (uses the task's truth)".
   */
  agent: AgentSettingsSchema.extend({ feedback: z.enum(AGENT_FEEDBACK_KINDS).optional() }).optional(),
});
export type ArmConfig = z.infer<typeof ArmSchema>;

const EvaluatorSchema = z
  .strictObject({
    /**
     * The protocol profile (src/protocol.ts): `corrected` (default) or `official` (the
     * published harness's rules, comparable with the leaderboard). It sets the pairing.
     */
    protocol: z.enum(PROTOCOL_PROFILES).default(DEFAULT_EXPERIMENT_PROFILE),
    /**
     * `offline`: heuristic judge and grounding (no model needed); `model`: the LLM ones,
     * as the harness does. judge, grounding and pairing override these one by one.
     */
    judges: z.enum(["offline", "model"]).default("offline"),
    /** Renamed (issue #14): accepted only to say so; see crossChecks. */
    profile: z.unknown().optional(),
    judge: z.enum(["heuristic", "llm"]).optional(),
    grounding: z.enum(["heuristic", "llm"]).optional(),
    pairing: z.enum(PAIRING_MODES).optional(),
    judgeModel: z.string().min(1).default("gpt-4o"),
    baseURL: optionalURL,
    /** Judgements per assertion: the first is scored, the others show the judge's own spread (`--judge-repeats`). */
    judgeRepeats: z.number().int().min(1).max(10).default(1),
  })
  .default({ protocol: DEFAULT_EXPERIMENT_PROFILE, judges: "offline", judgeModel: "gpt-4o", baseURL: undefined, judgeRepeats: 1 });

export const ExperimentConfigSchema = z.strictObject({
  name: z.string().min(1).optional(),
  tasks: z.strictObject({
    file: z.string().min(1),
    ids: z.array(z.number().int().nonnegative()).min(1).optional(),
    interaction: z.array(z.enum(INTERACTION_CLASSES)).min(1).optional(),
    visual: z.array(z.enum(VISUAL_CLASSES)).min(1).optional(),
  }),
  /** The run folder (`--out` overrides it). */
  out: z.string().min(1).optional(),
  /** Cells (task × arm × repeat) whose page is being made at once: what bounds the model calls in flight. */
  concurrency: z.number().int().min(1).max(16).default(1),
  /** Pages the evaluator replays at once, and cells scored at once (default: concurrency). */
  evaluatorWorkers: z.number().int().min(1).max(16).optional(),
  cache: z.enum(CACHE_MODES).default("read-write"),
  /** Each model arm's runs per task (at temperature > 0 each repeat is a new sample). */
  repeats: z.number().int().min(1).max(20).default(1),
  evaluator: EvaluatorSchema,
  report: z
    .strictObject({
      /** The two arms whose paired per-task difference gets a bootstrap interval (default: the first two). */
      compare: z.tuple([z.string(), z.string()]).optional(),
      bootstrapResamples: z.number().int().min(100).max(100_000).default(10_000),
    })
    .default({ bootstrapResamples: 10_000 }),
  /**
   * Also self-check every cell's page (agents' feedback signal, from the task's inputs
   * alone; `given`: replaying the task's action descriptions, a labelled ablation) and
   * report how well its self-score tracks the evaluator's Final over each task's arms.
   */
  selfCheck: z.enum(["off", "given"]).default("off"),
  arms: z.array(ArmSchema).min(1).max(MAX_ARMS),
});

export type ArmKind =
  | { type: "single-pass" | "agent" | "reference" | "blank" }
  | { type: "mutant"; spec: MutantSpec }
  | { type: "module"; file: string }
  | { type: "results"; dir: string };

/** Arms whose pages are built from the task's own page: they measure the evaluator, and are replayed seeded (deterministic mode). */
export function isCalibrationArm(type: ArmKind["type"]): boolean {
  return type === "reference" || type === "blank" || type === "mutant";
}

/** Arms whose pages are made here without a model: built from the task's own page, or read from a folder. */
export function isLocalArm(type: ArmKind["type"]): boolean {
  return isCalibrationArm(type) || type === "results";
}

export interface Arm extends ArmConfig {
  parsed: ArmKind;
}

export interface EvaluatorConfig {
  judge: "heuristic" | "llm";
  grounding: "heuristic" | "llm";
  pairing: (typeof PAIRING_MODES)[number];
  judgeModel: string;
  baseURL?: string;
  protocol: ProtocolProfile;
  judges: "offline" | "model";
  judgeRepeats: number;
}

/** How a config was loaded, without the environment: a queue worker loads the same config the same way. */
export interface ConfigLoadOptions {
  out?: string;
  taskFile?: string;
  ids?: number[];
  judgeRepeats?: number;
}

export interface ExperimentConfig {
  /** The config file, and its folder (relative paths resolve against it). */
  file: string;
  /** The file as an absolute path and the overrides it was loaded with. */
  loadedWith: { file: string } & ConfigLoadOptions;
  name: string;
  taskFile: string;
  filters: { ids?: number[]; interaction?: string[]; visual?: string[] };
  out: string;
  concurrency: number;
  evaluatorWorkers: number;
  cache: (typeof CACHE_MODES)[number];
  repeats: number;
  evaluator: EvaluatorConfig;
  compare?: [string, string];
  bootstrapResamples: number;
  arms: Arm[];
  /** Arms left out (skipWithoutModel with no model), and why. */
  skippedArms: Array<{ name: string; reason: string }>;
  selfCheck: "off" | "given";
  /** The config's text, as read (recorded in the run folder). */
  text: string;
  /** Where a key sits in the file, for later checks (module exports, arm names in report.compare). */
  where(keyPath: readonly PropertyKey[]): string;
  fail(problems: ReadonlyArray<{ where: string; message: string }>): never;
}

function parseKind(kind: string, resolve: (file: string) => string): ArmKind {
  if (kind.startsWith("mutant:")) return { type: "mutant", spec: parseMutantSpec(kind.slice("mutant:".length)) };
  if (kind.startsWith("module:")) return { type: "module", file: resolve(kind.slice("module:".length)) };
  if (kind.startsWith("results:")) return { type: "results", dir: resolve(kind.slice("results:".length)) };
  return { type: kind as "single-pass" | "agent" | "reference" | "blank" };
}

const MODEL_FILE = /\.ya?ml$/i;

function withoutDefaultFeedback<T extends { feedback?: AgentFeedbackKind }>(agent: T): T {
  if (agent.feedback !== "self-check") return agent;
  const { feedback: _default, ...rest } = agent;
  return rest as T;
}

/** Which feedback an agent arm runs with (self-check unless `agent: { feedback: oracle }`). */
export function armFeedback(arm: Pick<Arm, "agent">): AgentFeedbackKind {
  return arm.agent?.feedback ?? "self-check";
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? "an" : "a");

/** The checks that span keys (zod checks each value alone). */
const family = (arm: { kind: string }) =>
  arm.kind.startsWith("results:") ? "results" : arm.kind.startsWith("module:") ? "module" : arm.kind.startsWith("mutant:") ? "mutant" : arm.kind;

function crossChecks(source: YamlSource, data: z.infer<typeof ExperimentConfigSchema>, base: string): Array<{ where: string; message: string }> {
  const problems: Array<{ where: string; message: string }> = [];
  const add = (keyPath: Array<string | number>, message: string) =>
    problems.push({ where: source.where(keyPath), message: `${formatFieldPath(keyPath)}: ${message}` });
  if (data.evaluator.profile !== undefined) {
    add(
      ["evaluator", "profile"],
      "was split in two: `judges: offline | model` (heuristic or LLM judge and grounding) and `protocol: corrected | official` (our rules or the harness's)",
    );
  }
  const seen = new Map<string, number>();
  data.arms.forEach((arm, index) => {
    const lower = arm.name.toLowerCase();
    if (seen.has(lower)) add(["arms", index, "name"], `${quoted(arm.name)} is also arm ${seen.get(lower)}'s name (names, as folders, must differ beyond case)`);
    seen.set(lower, index);
    const needsModel = arm.kind === "single-pass" || arm.kind === "agent";
    if (needsModel && !arm.model && !arm.skipWithoutModel)
      add(["arms", index], `${article(arm.kind)} ${arm.kind} arm needs a model (a preset, a YAML file or a model id)`);
    const allowed: Record<string, readonly string[]> = {
      "single-pass": ["model", "baseURL", "prompt", "temperature", "skipWithoutModel"],
      agent: ["model", "critic", "baseURL", "agent", "skipWithoutModel"],
      results: ["model"],
      module: ["model", "baseURL"],
    };
    const kindFamily = family(arm);
    for (const key of ["model", "critic", "baseURL", "prompt", "temperature", "agent", "skipWithoutModel"] as const) {
      const given = key === "skipWithoutModel" ? arm[key] === true : arm[key] !== undefined;
      if (given && !(allowed[kindFamily] ?? []).includes(key)) {
        add(["arms", index, key], `${article(kindFamily)} ${kindFamily} arm takes no ${key}`);
      }
    }
  });
  data.arms.forEach((arm, index) => {
    if (arm.prompt && !fs.existsSync(path.resolve(base, arm.prompt)))
      add(["arms", index, "prompt"], `prompt file ${path.resolve(base, arm.prompt)} does not exist`);
    if (family(arm) === "results" && arm.model) {
      const problem = folderNameProblem(arm.model.toLowerCase().replace(/\//g, "__"));
      if (problem) add(["arms", index, "model"], `${quoted(arm.model)} cannot name a model folder: ${problem}`);
    }
  });
  if (data.out !== undefined) {
    const problem = outputFolderProblem(path.resolve(base, data.out));
    if (problem) add(["out"], problem);
  }
  if (data.name) {
    const problem = folderNameProblem(data.name);
    if (problem) add(["name"], `${quoted(data.name)} cannot be used as the run folder's default name: ${problem}`);
  }
  const names = new Set(data.arms.map((arm) => arm.name));
  data.report.compare?.forEach((name, index) => {
    if (!names.has(name)) add(["report", "compare", index], `no arm is named ${quoted(name)} (arms: ${quoted([...names].join(", "))})`);
  });
  return problems;
}

/** Reads and validates an experiment config; throws IwrError("CONFIG_INVALID") listing every problem. */
export function loadExperimentConfig(file: string, options: ConfigLoadOptions & { env?: NodeJS.ProcessEnv } = {}): ExperimentConfig {
  const source = readYamlSource(file, { code: "CONFIG_INVALID", env: options.env ?? process.env, what: "experiment config" });
  const data = source.validate(ExperimentConfigSchema);
  const base = path.dirname(path.resolve(file));
  const problems = crossChecks(source, data, base);
  if (problems.length > 0) source.fail(problems);
  const resolve = (relative: string) => path.resolve(base, relative);
  const name = data.name ?? path.basename(file).replace(/\.ya?ml$/i, "");
  const running = new Set(data.arms.filter((arm) => !(arm.skipWithoutModel && !arm.model)).map((arm) => arm.name));
  if (running.size === 0)
    source.fail([
      { where: source.where(["arms"]), message: "arms: every arm is left out for want of a model; configure one (IWR_MODEL) or add an arm that needs none" },
    ]);
  const compare = data.report.compare?.every((arm) => running.has(arm)) ? data.report.compare : undefined;
  const { protocol, judges } = data.evaluator;
  const modelJudges = judges === "model";
  const { env: _env, ...overrides } = options;
  return {
    file,
    loadedWith: {
      file: path.resolve(file),
      ...overrides,
      ...(overrides.out ? { out: path.resolve(overrides.out) } : {}),
      ...(overrides.taskFile ? { taskFile: path.resolve(overrides.taskFile) } : {}),
    },
    name,
    taskFile: options.taskFile ? path.resolve(options.taskFile) : resolve(data.tasks.file),
    filters: {
      ...(options.ids ? { ids: options.ids } : data.tasks.ids ? { ids: data.tasks.ids } : {}),
      ...(data.tasks.interaction ? { interaction: data.tasks.interaction } : {}),
      ...(data.tasks.visual ? { visual: data.tasks.visual } : {}),
    },
    out: options.out ? path.resolve(options.out) : data.out ? resolve(data.out) : path.resolve("runs", name),
    concurrency: data.concurrency,
    evaluatorWorkers: data.evaluatorWorkers ?? data.concurrency,
    cache: data.cache,
    repeats: data.repeats,
    evaluator: {
      protocol,
      judges,
      judge: data.evaluator.judge ?? (modelJudges ? "llm" : "heuristic"),
      grounding: data.evaluator.grounding ?? (modelJudges ? "llm" : "heuristic"),
      pairing: data.evaluator.pairing ?? profileRules(protocol).pairing,
      judgeModel: data.evaluator.judgeModel,
      judgeRepeats: options.judgeRepeats ?? data.evaluator.judgeRepeats,
      ...(data.evaluator.baseURL ? { baseURL: data.evaluator.baseURL } : {}),
    },
    ...(compare ? { compare } : {}),
    bootstrapResamples: data.report.bootstrapResamples,
    arms: data.arms
      .filter((arm) => !(arm.skipWithoutModel && !arm.model))
      .map((arm) => ({
        ...arm,
        ...(arm.prompt ? { prompt: resolve(arm.prompt) } : {}),
        // A model given as a YAML file is a path like any other in the config.
        ...(arm.model && MODEL_FILE.test(arm.model) ? { model: resolve(arm.model) } : {}),
        ...(arm.critic && MODEL_FILE.test(arm.critic) ? { critic: resolve(arm.critic) } : {}),
        // The default feedback is left unsaid, so a self-check arm's key is the same with or without `feedback: self-check`.
        ...(arm.agent ? { agent: withoutDefaultFeedback(arm.agent) } : {}),
        parsed: parseKind(arm.kind, resolve),
      })),
    skippedArms: data.arms.filter((arm) => arm.skipWithoutModel && !arm.model).map((arm) => ({ name: arm.name, reason: "no model configured" })),
    selfCheck: data.selfCheck,
    text: fs.readFileSync(file, "utf8"),
    where: (keyPath) => source.where(keyPath),
    fail: (list) => source.fail(list),
  };
}
