/**
 * run.json: what made a run, so another researcher can tell whether two runs are
 * comparable — the config and its hash, the task file's hash, this project's version and
 * commit, Node, Chromium, ffmpeg and the OCR engine's versions, every prompt's hash, the
 * models (endpoints shown without credentials) and the evaluator's settings.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { sha256Hex } from "../files/content-hash.ts";
import { ocrEngineLabel } from "../metrics/ocr-choice.ts";
import { displayURL, publicModelSpec } from "../models/endpoint.ts";
import type { ModelSpec } from "../models/spec.ts";
import { PROMPTS_DIR } from "../prompts/template.ts";
import { findChromium, findFfmpeg } from "../setup/find-tools.ts";
import type { ExperimentConfig } from "./config.ts";

const require = createRequire(import.meta.url);
const PROJECT_ROOT = path.resolve(path.dirname(PROMPTS_DIR));

/** The first line a program prints, or "unknown"; the programs are asked at once, not one after another. */
function firstLineOf(command: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(command, args, { encoding: "utf8", timeout: 10_000 }, (error, stdout) => {
      resolve(error ? "unknown" : (stdout.split("\n")[0]?.trim() ?? "unknown"));
    });
  });
}

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

function promptHashes(config: ExperimentConfig): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const file of fs
    .readdirSync(PROMPTS_DIR)
    .filter((name) => name.endsWith(".md"))
    .sort())
    hashes[file.replace(/\.md$/, "")] = sha256Hex(fs.readFileSync(path.join(PROMPTS_DIR, file)));
  for (const arm of config.arms) if (arm.prompt && fs.existsSync(arm.prompt)) hashes[`${arm.name}:prompt`] = sha256Hex(fs.readFileSync(arm.prompt));
  return hashes;
}

export async function reproducibilityRecord(config: ExperimentConfig, models: readonly ModelSpec[]) {
  const chromium = findChromium();
  const ffmpeg = findFfmpeg();
  const project = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { name: string; version: string };
  const [commit, chromiumVersion, ffmpegVersion] = await Promise.all([
    firstLineOf("git", ["-C", PROJECT_ROOT, "rev-parse", "HEAD"]),
    chromium ? firstLineOf(chromium.path, ["--version"]) : "not found",
    ffmpeg ? firstLineOf(ffmpeg.path, ["-version"]) : "not found",
  ]);
  return {
    version: 1,
    name: config.name,
    startedAt: new Date().toISOString(),
    config: { file: path.resolve(config.file), sha256: sha256Hex(config.text) },
    tasks: { file: config.taskFile, sha256: sha256Hex(fs.readFileSync(config.taskFile)), filters: config.filters },
    project: { name: project.name, version: project.version, commit },
    tools: {
      node: process.version,
      chromium: chromiumVersion,
      ffmpeg: ffmpegVersion,
      ocr: ocrEngineLabel(),
      playwright: packageVersion("playwright"),
      langgraph: packageVersion("@langchain/langgraph"),
    },
    promptHashes: promptHashes(config),
    models: [...new Map(models.map((spec) => [spec.name, publicModelSpec(spec)])).values()],
    evaluator: { ...config.evaluator, ...(config.evaluator.baseURL ? { baseURL: displayURL(config.evaluator.baseURL) } : {}) },
    arms: config.arms.map(({ parsed: _parsed, ...arm }) => ({ ...arm, ...(arm.baseURL ? { baseURL: displayURL(arm.baseURL) } : {}) })),
    ...(config.compare ? { compare: config.compare } : {}),
    bootstrapResamples: config.bootstrapResamples,
    concurrency: config.concurrency,
    evaluatorWorkers: config.evaluatorWorkers,
    cache: config.cache,
    repeats: config.repeats,
  };
}
