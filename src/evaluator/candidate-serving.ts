/**
 * What a candidate page can reach while it is evaluated: its own page files at "/"
 * (a private copy, without the results beside it) and the task's assets at the URL
 * path its relative asset links resolve to. Checkpoints, other tasks and earlier
 * results are not served (IWR-PROTOCOL.md §3; the page is untrusted).
 */
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Mount } from "../browser/host.ts";

export const CANDIDATE_FILE = "index.html";
export const EVAL_FILE = "eval.json";
export const REPLAY_FILE = "replay.json";
export const TRACE_FILE = "trace.zip";
export const EVALPOINTS_DIR = "evalpoints";

/** The URL path a candidate's relative asset links resolve to when it is served at "/". */
export function assetsUrlPath(candidateDir: string, assetsDir: string): string {
  const relative = path.relative(candidateDir, assetsDir).split(path.sep).join("/");
  return new URL(`${relative}/`, "http://127.0.0.1/").pathname;
}

/** Files of a candidate folder the page must not read: the evaluator's and the generator's own records. */
const PRIVATE_ENTRIES = new Set([EVAL_FILE, REPLAY_FILE, TRACE_FILE, EVALPOINTS_DIR, "generation.json"]);

/**
 * Mounts: the candidate's files at "/" and the task's assets where its links point;
 * nothing else is reachable (no checkpoints, no other task, no eval.json of an
 * earlier run). `servedDir` is the folder actually mounted at "/": a copy of the
 * candidate's page files (see stageCandidate), while the assets path is computed
 * from the candidate's real folder, where its relative links were written.
 */
export function candidateMounts(candidateDir: string, assetsDir: string, servedDir: string = candidateDir): Mount[] {
  const assetsPath = assetsUrlPath(candidateDir, assetsDir);
  return assetsPath === "/" ? [{ urlPath: "/", dir: servedDir }] : [
    { urlPath: "/", dir: servedDir },
    { urlPath: assetsPath, dir: assetsDir },
  ];
}

/** Copies the candidate's page files (not its results) to a private temp folder to be served from. */
export async function stageCandidate(candidateDir: string): Promise<string> {
  const staged = await fsp.mkdtemp(path.join(os.tmpdir(), "iwr-candidate-"));
  await fsp.cp(candidateDir, staged, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(candidateDir, source);
      const top = relative.split(path.sep)[0] ?? "";
      return relative === "" || (!PRIVATE_ENTRIES.has(top) && !top.startsWith("."));
    },
  });
  return staged;
}
