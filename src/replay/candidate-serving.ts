/**
 * What a candidate page can reach while it is evaluated: its own page files at "/"
 * (a private copy, without the records beside it) and the task's assets at the URL
 * path its relative asset links resolve to. Checkpoints, other tasks and earlier
 * results are not served (docs/protocol.md §3; the page is untrusted).
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Mount } from "../browser/host.ts";
import { IwrError } from "../errors.ts";
import { tempPathBeside } from "../files/atomic.ts";
import { RECORD_ENTRIES } from "../results/layout.ts";

/** The URL path a candidate's relative asset links resolve to when it is served at "/". */
export function assetsUrlPath(candidateDir: string, assetsDir: string): string {
  const relative = path.relative(candidateDir, assetsDir).split(path.sep).join("/");
  return new URL(`${relative}/`, "http://127.0.0.1/").pathname;
}

function isInside(folder: string, candidate: string): boolean {
  const relative = path.relative(folder, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * The assets folder as it may be served: its real location must lie inside `confineTo`
 * (the task set's folder) once symbolic links are resolved, so a task whose `assets/`
 * points at /etc serves nothing. The loader refuses such a task already; this is the
 * second wall.
 */
export function confinedAssetsDir(assetsDir: string, confineTo: string): string {
  const real = fs.realpathSync(assetsDir);
  const root = fs.realpathSync(confineTo);
  if (!isInside(root, real)) {
    throw new IwrError("TASK_INVALID", `${assetsDir} resolves to ${real}, outside the task set ${root}: it is not served`, { assetsDir, real });
  }
  return real;
}

/**
 * Mounts: the candidate's files at "/" and the task's assets where its links point;
 * nothing else is reachable (no checkpoints, no other task, no eval.json of an
 * earlier run). `servedDir` is the folder actually mounted at "/": a copy of the
 * candidate's page files (see stageCandidate), while the assets path is computed
 * from the candidate's real folder, where its relative links were written.
 */
export function candidateMounts(candidateDir: string, assetsDir: string, servedDir: string = candidateDir): Mount[] {
  const assetsPath = assetsUrlPath(candidateDir, assetsDir);
  return assetsPath === "/"
    ? [{ urlPath: "/", dir: servedDir }]
    : [
        { urlPath: "/", dir: servedDir },
        { urlPath: assetsPath, dir: assetsDir },
      ];
}

/**
 * Copies the candidate's page files (not its records, not hidden temp entries) into a
 * private temp folder inside the candidate folder (`.served.<writer>.tmp`), to be
 * served from. Inside, not in /tmp: a run killed mid-replay leaves it where the next
 * run's sweep of this folder removes it (sweepAbandonedTemps).
 */
export async function stageCandidate(candidateDir: string): Promise<string> {
  const staged = tempPathBeside(path.join(candidateDir, "served"));
  try {
    await fsp.mkdir(staged);
    // Entry by entry: fs.cp refuses to copy a folder into a folder inside itself.
    for (const name of await fsp.readdir(candidateDir)) {
      if (RECORD_ENTRIES.has(name) || name.startsWith(".")) continue;
      await fsp.cp(path.join(candidateDir, name), path.join(staged, name), { recursive: true });
    }
  } catch (error) {
    await fsp.rm(staged, { recursive: true, force: true });
    throw error;
  }
  return staged;
}
