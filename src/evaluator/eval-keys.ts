/**
 * What an eval.json scored, as hashes, so a result is redone exactly when something it
 * depends on changed: the candidate's page files, the task (its line, checkpoints, the
 * states around every action when it has them, and assets) and the evaluator's settings (judge, grounding, metrics, prompts, pairing,
 * protocol constants). `iwr evaluate` skips a task only when all three match the
 * finished eval.json; a page that appeared, was regenerated or edited is scored again.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { sha256Hex } from "../files/content-hash.ts";
import { canonicalJson } from "../models/request-key.ts";
import { AT_REST, PROTOCOL, profileRules } from "../protocol.ts";
import { confinedAssetsDir } from "../replay/candidate-serving.ts";
import { RECORD_ENTRIES, RESULT_FILES } from "../results/layout.ts";
import type { Task } from "../tasks/schema.ts";
import { comparableSettings, type EvalSettings } from "./eval-record.ts";

export interface EvalInputKeys {
  /** sha256 over the candidate's page files (names and contents); null when it had no index.html. */
  candidate: string | null;
  /** sha256 of the task line, its checkpoints and its assets. */
  task: string;
  /** sha256 of the comparable settings and the protocol constants. */
  settings: string;
}

/** Files under `dir` (recursively), relative paths with "/", sorted; `skipTop` filters the first level. */
async function listFiles(dir: string, skipTop: (name: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string, prefix: string): Promise<void> => {
    const entries = await fs.readdir(folder, { withFileTypes: true });
    for (const entry of entries) {
      if (prefix === "" && skipTop(entry.name)) continue;
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path.join(folder, entry.name), relative);
      else found.push(relative);
    }
  };
  await walk(dir, "");
  return found.sort();
}

async function hashFiles(root: string, files: readonly string[]): Promise<string> {
  const lines: string[] = [];
  for (const file of files) {
    const content = await fs.readFile(path.join(root, file)).catch(() => Buffer.from("(unreadable)"));
    lines.push(`${file}\t${sha256Hex(content)}`);
  }
  return sha256Hex(lines.join("\n"));
}

/** The page files the evaluator serves (see stageCandidate); null without an index.html. */
export async function candidateKey(candidateDir: string): Promise<string | null> {
  const present = await fs.stat(path.join(candidateDir, RESULT_FILES.page)).then(
    (stat) => stat.isFile(),
    () => false,
  );
  if (!present) return null;
  const files = await listFiles(candidateDir, (name) => RECORD_ENTRIES.has(name) || name.startsWith("."));
  return hashFiles(candidateDir, files);
}

export async function taskKey(task: Task): Promise<string> {
  const hashEach = (files: readonly string[]) => Promise.all(files.map(async (file) => sha256Hex(await fs.readFile(file).catch(() => Buffer.alloc(0)))));
  const checkpoints = await hashEach(task.truth.checkpointPaths);
  // The states around every action are truth a judge may read: keyed when the task has them, so older tasks keep their keys.
  const states = task.truth.actionStatePaths ? { states: await hashEach(task.truth.actionStatePaths) } : {};
  // Through the same wall as serving: nothing outside the task set is read, not even to hash it.
  const assets = await hashFiles(confinedAssetsDir(task.inputs.assetsDir, task.setDir), task.inputs.assetFiles);
  return sha256Hex(canonicalJson({ line: task.line, checkpoints, ...states, assets }));
}

export function settingsKey(settings: EvalSettings): string {
  // The profile's rules too: a record scored under other rules (a parse, a metric's edge case) is scored again.
  // The at-rest rule's timings count only where the profile waits by them, so records made under fixed waits stay valid.
  const rules = profileRules(settings.protocol);
  const atRest = rules.screenshotSettle === "at-rest" ? { atRest: AT_REST } : {};
  return sha256Hex(canonicalJson({ settings: comparableSettings(settings), protocol: PROTOCOL, rules, ...atRest }));
}

export function sameInputs(a: EvalInputKeys | undefined, b: EvalInputKeys): boolean {
  return a !== undefined && a.candidate === b.candidate && a.task === b.task && a.settings === b.settings;
}
