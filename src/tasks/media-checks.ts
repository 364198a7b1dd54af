/**
 * The thorough media check of a task folder (its video probed and decoded to the end,
 * every PNG decoded: validate.ts) costs seconds a task; `npm start` runs it on every
 * start. Its verdict depends only on the files' bytes, their paths (messages name them),
 * the task's resolution and the ffmpeg / ffprobe programs, so a check that found no
 * problem is kept under a hash of exactly those, and the same folder is not decoded again
 * until one of them changes. A check that found a problem is never kept: it runs again.
 *
 * One JSON file per kept check under `.cache/media-checks/` (or IWR_MEDIA_CHECKS_DIR;
 * `off` keeps nothing), written atomically; an entry that does not parse or names
 * another key is ignored.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../files/atomic.ts";
import { log } from "../log/logger.ts";
import type { VideoInfo } from "../media/probe.ts";
import { findFfmpeg, findFfprobe } from "../setup/find-tools.ts";

const logger = log("tasks");

/** Bumped when the checks themselves change what they find. */
const CHECK_VERSION = 1;

const ENTRY = z.object({
  version: z.literal(CHECK_VERSION),
  key: z.string(),
  warnings: z.array(z.string()),
  video: z.record(z.string(), z.unknown()).optional(),
});

/** What a kept check found besides "no problem". */
export interface KeptMediaCheck {
  warnings: string[];
  video?: VideoInfo;
}

/** The folder kept checks go to; undefined when switched off. */
export function defaultMediaChecksDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env.IWR_MEDIA_CHECKS_DIR?.trim();
  if (configured === "off") return undefined;
  return path.resolve(configured || path.join(".cache", "media-checks"));
}

function programIdentity(file: string | undefined): string {
  if (!file) return "none";
  try {
    const stat = fs.statSync(file);
    return `${file} ${stat.size} ${Math.round(stat.mtimeMs)}`;
  } catch {
    return `${file} unreadable`;
  }
}

/**
 * The key of a check of `files` (video, sheets, checkpoints, in the order checked) at
 * `resolution`: undefined when a file cannot be read (then there is nothing to keep).
 */
export async function mediaCheckKey(files: readonly string[], resolution: string | undefined): Promise<string | undefined> {
  const hash = createHash("sha256").update(`media-check ${CHECK_VERSION}\n${resolution ?? "-"}\n`);
  hash.update(`ffmpeg ${programIdentity(findFfmpeg()?.path)}\nffprobe ${programIdentity(findFfprobe())}\n`);
  for (const file of files) {
    try {
      const content = createHash("sha256")
        .update(await fsp.readFile(file))
        .digest("hex");
      hash.update(`${path.resolve(file)} ${content}\n`);
    } catch {
      return undefined;
    }
  }
  return hash.digest("hex");
}

function entryPath(dir: string, key: string): string {
  return path.join(dir, `${key}.json`);
}

/** The kept check of this key, if any. */
export async function keptMediaCheck(key: string, dir = defaultMediaChecksDir()): Promise<KeptMediaCheck | undefined> {
  if (!dir) return undefined;
  let raw: string;
  try {
    raw = await fsp.readFile(entryPath(dir, key), "utf8");
  } catch {
    return undefined;
  }
  try {
    const entry = ENTRY.parse(JSON.parse(raw));
    if (entry.key === key) return { warnings: entry.warnings, ...(entry.video ? { video: entry.video as unknown as VideoInfo } : {}) };
  } catch {
    // Falls through: a damaged entry means the folder is checked again.
  }
  logger.debug(`media checks: ignoring a damaged entry ${entryPath(dir, key)}`);
  return undefined;
}

/** Keeps a check that found no problem. */
export async function keepMediaCheck(key: string, check: KeptMediaCheck, dir = defaultMediaChecksDir()): Promise<void> {
  if (!dir) return;
  try {
    await writeFileAtomic(entryPath(dir, key), `${JSON.stringify({ version: CHECK_VERSION, key, ...check })}\n`);
  } catch (error) {
    // Only the next start pays for the check again.
    logger.warn(`media checks: could not keep ${entryPath(dir, key)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
