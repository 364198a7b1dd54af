/**
 * Looking after a response cache folder: counting and clearing entries. Only files
 * the cache itself writes (`<model-dir>/<64 hex>.json` and leftover temp files) are
 * ever deleted, so pointing `--dir` at the wrong folder cannot wipe anything else.
 */
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";
import { parseTempName } from "../files/atomic.ts";
import { modelDirName } from "./spec.ts";

const ENTRY_FILE = /^[0-9a-f]{64}\.json$/;
/** A temp file the cache's atomic write left beside an entry (see tempPathBeside). */
const isEntryTemp = (name: string): boolean => ENTRY_FILE.test(parseTempName(name)?.target ?? "");

export interface ModelCacheStats {
  /** The model's folder name (lower-cased, "/" as "__"). */
  model: string;
  entries: number;
  bytes: number;
}

export interface CacheStats {
  dir: string;
  entries: number;
  bytes: number;
  models: ModelCacheStats[];
}

export interface ClearResult {
  removedEntries: number;
  removedBytes: number;
}

function modelFolders(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  if (!fs.statSync(dir).isDirectory()) throw new IwrError("IO", `cache dir ${dir} is not a folder`, { dir });
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

function folderStats(folder: string, model: string): ModelCacheStats {
  let entries = 0;
  let bytes = 0;
  for (const name of fs.readdirSync(folder)) {
    if (!ENTRY_FILE.test(name)) continue;
    entries += 1;
    bytes += fs.statSync(path.join(folder, name)).size;
  }
  return { model, entries, bytes };
}

export function cacheStats(dir: string): CacheStats {
  const absolute = path.resolve(dir);
  const models = modelFolders(absolute)
    .map((model) => folderStats(path.join(absolute, model), model))
    .filter((stats) => stats.entries > 0);
  return {
    dir: absolute,
    entries: models.reduce((sum, stats) => sum + stats.entries, 0),
    bytes: models.reduce((sum, stats) => sum + stats.bytes, 0),
    models,
  };
}

/** Removes every entry, or only one model's (matched like result folders: case-insensitive, "/" as "__"). */
export function clearCache(dir: string, options: { model?: string } = {}): ClearResult {
  const absolute = path.resolve(dir);
  const wanted = options.model === undefined ? undefined : modelDirName(options.model);
  const folders = modelFolders(absolute).filter((folder) => wanted === undefined || folder === wanted);
  let removedEntries = 0;
  let removedBytes = 0;
  for (const folder of folders) {
    const folderPath = path.join(absolute, folder);
    for (const name of fs.readdirSync(folderPath)) {
      const isEntry = ENTRY_FILE.test(name);
      if (!isEntry && !isEntryTemp(name)) continue;
      const file = path.join(folderPath, name);
      if (isEntry) {
        removedEntries += 1;
        removedBytes += fs.statSync(file).size;
      }
      fs.rmSync(file, { force: true });
    }
    // Only an emptied folder goes; anything else someone put there stays.
    if (fs.readdirSync(folderPath).length === 0) fs.rmdirSync(folderPath);
  }
  return { removedEntries, removedBytes };
}
