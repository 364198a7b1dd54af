/**
 * Making one cell's page, by arm kind: the generator side of an experiment cell. Each
 * producer writes the page (and its own record: generation.json, agent.json, mutant.json,
 * source.json) into the cell's candidate folder and says what it cost. It never sees the
 * task's truth except where the arm is a calibration built from it (reference, mutants).
 */
import fs from "node:fs";
import path from "node:path";
import escapeRegExp from "escape-string-regexp";
import type { PageGenerator } from "../../agents/module-contract.ts";
import { settleWithin } from "../browser/deadline.ts";
import { referencePageHtml, stageReferenceSiteFiles, writeCalibrationCandidate } from "../calibration/calibration.ts";
import { IwrError, toErrorRecord } from "../errors.ts";
import type { Evaluator } from "../evaluator/evaluate-task.ts";
import type { PairingMode } from "../evaluator/settings.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";
import { linksLeaving } from "../files/links-leaving.ts";
import { assetsBasePath } from "../generation/page-from-reply.ts";
import { redactString } from "../log/redact.ts";
import {
  type CacheMode,
  createModelClient,
  forRepeat,
  type ModelSpec,
  NO_USAGE,
  openResponseCache,
  SAMPLES_PER_REPEAT,
  UsageSchema,
  usageOfCall,
} from "../models/index.ts";
import { writeMutant } from "../mutants/ladder.ts";
import { mutantLabel } from "../mutants/operators.ts";
import type { ProtocolProfile } from "../protocol.ts";
import type { CellOutcome } from "../results/cell-record.ts";
import { agentFiles, candidateFiles, modelFolderName, RECORD_ENTRIES, RESULT_FILES } from "../results/layout.ts";
import { runAgentRun } from "../run/agent.ts";
import { runGeneration } from "../run/generate.ts";
import type { Cell } from "./cell.ts";
import { pageOfReply } from "./module-arm.ts";

export type ProduceOutcome = CellOutcome;

/** What a producer needs beyond the cell: loaded once per run. */
export interface ArmResources {
  specs: Map<string, { drafter: ModelSpec; critic?: ModelSpec }>;
  modules: Map<string, PageGenerator>;
  cacheMode: CacheMode;
  cacheDir?: string;
  statesCacheDir?: string;
  signal: AbortSignal;
  /** The hard stop, a grace period after `signal`: cancels the model calls and agent nodes still in flight. */
  hardStop?: AbortSignal;
  log: (message: string) => void;
  /** A module generator's time limit per cell. */
  moduleTimeoutMs: number;
  /** The run's protocol profile: single-pass arms generate under its rules (the harness's under official). */
  protocol: ProtocolProfile;
  /** The run's fixed evaluator and pairing, for agent arms with oracle feedback (they are told its verdict on each draft). */
  oracle?: { evaluator: () => Promise<Evaluator>; pairing: PairingMode };
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

const pageExists = (dir: string) => fs.existsSync(candidateFiles(dir).page);

async function produceSinglePass(cell: Cell, resources: ArmResources): Promise<Omit<ProduceOutcome, "wallMs">> {
  const { drafter } = resources.specs.get(cell.arm.name)!;
  const spec = cell.arm.temperature !== undefined ? { ...drafter, temperature: cell.arm.temperature } : drafter;
  const summary = await runGeneration({
    tasks: [cell.task.inputs],
    resultDir: cell.resultDir,
    spec,
    cacheMode: resources.cacheMode,
    ...(resources.cacheDir ? { cacheDir: resources.cacheDir } : {}),
    ...(cell.arm.prompt ? { promptFile: cell.arm.prompt } : {}),
    ...(cell.repeat > 0 ? { sample: cell.repeat * SAMPLES_PER_REPEAT } : {}),
    protocol: resources.protocol,
    workers: 1,
    ...(resources.hardStop ? { signal: resources.hardStop } : {}),
  });
  const result = summary.results[0];
  const reply = readJson(candidateFiles(cell.dir).generation)?.reply as
    | { usage?: { inputTokens: number; outputTokens: number }; costUsd?: number; latencyMs?: number; cacheHit?: boolean }
    | undefined;
  const usage = reply
    ? usageOfCall({
        usage: { inputTokens: reply.usage?.inputTokens ?? 0, outputTokens: reply.usage?.outputTokens ?? 0 },
        costUsd: reply.costUsd ?? 0,
        cacheHit: reply.cacheHit ?? false,
        latencyMs: reply.latencyMs ?? 0,
      })
    : NO_USAGE;
  if (result?.status === "failed" || !pageExists(cell.dir)) {
    return { status: "failed", error: result?.error ?? { code: "MODEL_REPLY", message: "no page was generated" }, usage };
  }
  return { status: "made", usage };
}

async function produceAgent(cell: Cell, resources: ArmResources): Promise<Omit<ProduceOutcome, "wallMs">> {
  const { drafter, critic } = resources.specs.get(cell.arm.name)!;
  const { feedback = "self-check", ...settings } = cell.arm.agent ?? {};
  const [result] = await runAgentRun({
    tasks: [cell.task],
    resultDir: cell.resultDir,
    drafter,
    ...(critic ? { critic } : {}),
    settings,
    feedback,
    ...(feedback === "oracle" && resources.oracle ? { oracle: resources.oracle } : {}),
    cacheMode: resources.cacheMode,
    ...(resources.cacheDir ? { cacheDir: resources.cacheDir } : {}),
    ...(resources.statesCacheDir ? { statesCacheDir: resources.statesCacheDir } : {}),
    resume: true,
    repeat: cell.repeat,
    keepSharedResources: true,
    shouldStop: () => resources.signal.aborted,
    ...(resources.hardStop ? { signal: resources.hardStop } : {}),
  });
  const agent = agentFiles(cell.dir);
  const record = readJson(agent.record);
  const recorded = UsageSchema.safeParse(record?.usage);
  const usage = recorded.success ? recorded.data : NO_USAGE;
  const drafts = (record?.drafts as Array<{ id: number; round: number; page?: unknown; selfScore?: number }> | undefined) ?? [];
  const iterations = drafts
    .filter((draft) => draft.page)
    .map((draft) => ({
      draft: draft.id,
      round: draft.round,
      dir: agent.iteration(draft.id),
      ...(draft.selfScore !== undefined ? { selfScore: draft.selfScore } : {}),
    }))
    .filter((entry) => pageExists(entry.dir));
  const base = {
    usage,
    iterations,
    ...(typeof record?.bestSelfScore === "number" ? { selfScore: record.bestSelfScore } : {}),
  };
  if (!result || result.status === "failed" || result.status === "stopped" || !pageExists(cell.dir)) {
    return {
      status: "failed",
      error: result?.error ?? {
        code: "MODEL_REPLY",
        message: `the agent ${result?.status ?? "did not run"}${result?.stopReason ? ` (${result.stopReason})` : ""}`,
      },
      ...base,
    };
  }
  return { status: "made", ...base };
}

function produceCalibration(cell: Cell): Omit<ProduceOutcome, "wallMs"> {
  const { parsed } = cell.arm;
  if (parsed.type === "reference" || parsed.type === "blank") writeCalibrationCandidate(cell.task, cell.resultDir, parsed.type);
  else if (parsed.type === "mutant") {
    stageReferenceSiteFiles(cell.task, cell.dir);
    writeMutant(cell.dir, referencePageHtml(cell.task, cell.dir), parsed.spec, `reference page of task ${cell.task.id} (${mutantLabel(parsed.spec)})`);
  }
  return { status: "made", usage: NO_USAGE };
}

async function produceModule(cell: Cell, resources: ArmResources): Promise<Omit<ProduceOutcome, "wallMs">> {
  if (cell.arm.parsed.type !== "module") throw new Error("not a module arm");
  const file = cell.arm.parsed.file;
  const generate = resources.modules.get(cell.arm.name)!;
  const files = candidateFiles(cell.dir);
  fs.mkdirSync(cell.dir, { recursive: true });
  await fs.promises.rm(files.page, { force: true });
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  resources.signal.addEventListener("abort", onAbort);
  const spec = resources.specs.get(cell.arm.name)?.drafter;
  const model = spec ? forRepeat(createModelClient(spec, { cache: openResponseCache(resources.cacheDir, resources.cacheMode) }), cell.repeat) : undefined;
  const started = new Date();
  try {
    // The host's deadline helper: a generator that overruns is left to settle on its own, its rejection observed.
    const settled = await settleWithin(
      Promise.resolve(
        generate(cell.task.inputs, {
          ...(model ? { model } : {}),
          outputDir: cell.dir,
          assetsBase: assetsBasePath(cell.dir, cell.task.inputs.assetsDir),
          repeat: cell.repeat,
          signal: controller.signal,
          log: (message) => resources.log(`${cell.arm.name} task ${cell.task.id}: ${message}`),
        }),
      ),
      resources.moduleTimeoutMs,
    );
    if (settled.status === "failed") throw settled.error;
    if (settled.status !== "done") throw new IwrError("MODEL", `the generator in ${file} did not finish within ${resources.moduleTimeoutMs / 1000} s`);
    const reply = settled.value;
    const html = pageOfReply(reply, file);
    const record = {
      version: 1,
      generator: "module",
      module: file,
      moduleSha256: sha256Hex(fs.readFileSync(file)),
      taskId: cell.task.id,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
    };
    await writeFileAtomic(files.generation, `${redactString(JSON.stringify(record, null, 2))}\n`);
    await writeFileAtomic(files.page, redactString(html));
    return { status: "made", usage: NO_USAGE };
  } catch (error) {
    controller.abort();
    const failure = toErrorRecord(error);
    await writeFileAtomic(
      files.generation,
      `${redactString(JSON.stringify({ version: 1, generator: "module", module: file, taskId: cell.task.id, error: failure }, null, 2))}\n`,
    );
    return { status: "failed", error: failure, usage: NO_USAGE };
  } finally {
    resources.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * A page made elsewhere links its assets relative to where it was written (the harness
 * resolves its placeholder against its own folders). Every relative URL ending in one of
 * the task's asset files is pointed at the assets from the cell's folder instead; the
 * rest of the page is left as it is.
 */
export function rebaseAssetLinks(html: string, assetFiles: readonly string[], assetsBase: string): { html: string; rewritten: number } {
  if (assetFiles.length === 0) return { html, rewritten: 0 };
  const names = [...assetFiles]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join("|");
  // A quoted or url()-wrapped relative reference: no scheme, no leading slash, ends in /<asset file>.
  const link = new RegExp(`(["'(])(?![a-zA-Z][a-zA-Z0-9+.-]*:|/)((?:[^"'()\\s<>]*/)?)(${names})(?=["')?#])`, "g");
  let rewritten = 0;
  const result = html.replace(link, (_match, open: string, _dir: string, file: string) => {
    rewritten += 1;
    return `${open}${assetsBase}/${file}`;
  });
  return { html: result, rewritten };
}

async function produceFromResults(cell: Cell): Promise<Omit<ProduceOutcome, "wallMs">> {
  if (cell.arm.parsed.type !== "results") throw new Error("not a results arm");
  const sourceDir = cell.arm.model
    ? path.join(cell.arm.parsed.dir, String(cell.task.id), modelFolderName(cell.arm.model, `arm ${cell.arm.name}: model`))
    : path.join(cell.arm.parsed.dir, String(cell.task.id));
  const files = candidateFiles(cell.dir);
  fs.mkdirSync(cell.dir, { recursive: true });
  await fs.promises.rm(files.page, { force: true });
  const sourcePage = candidateFiles(sourceDir).page;
  if (!fs.existsSync(sourcePage)) {
    return { status: "failed", error: { code: "CANDIDATE_MISSING", message: `no page at ${sourcePage}` }, usage: NO_USAGE };
  }
  // A link out of the folder appearing since the plan checked it: refused here too, never copied.
  const leaving = linksLeaving(sourceDir);
  if (leaving.length > 0)
    return {
      status: "failed",
      error: { code: "CONFIG_INVALID", message: `${sourceDir} holds symbolic links out of it: ${leaving.join(", ")}` },
      usage: NO_USAGE,
    };
  // The folder's other files come along (a page may load its own scripts or styles); records stay behind.
  for (const entry of fs.readdirSync(sourceDir, { withFileTypes: true })) {
    if (entry.name === RESULT_FILES.page || RECORD_ENTRIES.has(entry.name) || entry.name.startsWith(".")) continue;
    fs.cpSync(path.join(sourceDir, entry.name), path.join(cell.dir, entry.name), { recursive: true, dereference: false, verbatimSymlinks: true });
  }
  const original = fs.readFileSync(sourcePage, "utf8");
  const { html, rewritten } = rebaseAssetLinks(original, cell.task.inputs.assetFiles, assetsBasePath(cell.dir, cell.task.inputs.assetsDir));
  const record = {
    version: 1,
    generator: "results",
    source: sourcePage,
    sourceSha256: sha256Hex(original),
    assetLinksRebased: rewritten,
  };
  await writeFileAtomic(path.join(cell.dir, RESULT_FILES.source), `${JSON.stringify(record, null, 2)}\n`);
  await writeFileAtomic(files.page, html);
  return { status: "made", usage: NO_USAGE };
}

/** Makes the cell's page; a failure is returned (and recorded by the caller), never thrown. */
export async function producePage(cell: Cell, resources: ArmResources): Promise<ProduceOutcome> {
  const started = Date.now();
  try {
    const { parsed } = cell.arm;
    const outcome =
      parsed.type === "single-pass"
        ? await produceSinglePass(cell, resources)
        : parsed.type === "agent"
          ? await produceAgent(cell, resources)
          : parsed.type === "module"
            ? await produceModule(cell, resources)
            : parsed.type === "results"
              ? await produceFromResults(cell)
              : produceCalibration(cell);
    return { ...outcome, wallMs: Date.now() - started };
  } catch (error) {
    return { status: "failed", error: toErrorRecord(error), usage: NO_USAGE, wallMs: Date.now() - started };
  }
}
