/**
 * What the measuring engines read from an image (its OCR text, its DINO embedding or SSIM
 * grey pixels, the self-check's grey pixels), kept on disk between runs. An image is the
 * same picture for every candidate, arm and run that shows it (a checkpoint for every
 * model, a video state for every draft, a near miss's screens for the true page's), and
 * reading a 720p screen costs ~0.5 s of CPU: each distinct picture is read once per
 * reader setup, and later runs find the reading by the image's content key.
 *
 * Layout: `<dir>/<reader folder>/<key[0..2]>/<key>.bin`, one file per reading, written
 * atomically; `<reader folder>/reader.json` names the reader in full (for `iwr cache
 * stats`). The reader folder is a hash of the reader's identity (its kind and every
 * setting that changes what it reads), so a new engine never gets an old engine's
 * reading. Each file starts with a JSON header line naming its reader and image; one
 * that does not parse, or names another reader or image, is ignored (and replaced),
 * never trusted.
 *
 * Bounded: when the readings pass `maxBytes` (2 GiB, or IWR_READINGS_CACHE_MAX_MB), the
 * least recently used are deleted until they fill 80 % of it (a file's modification time
 * is its last use: a hit older than an hour touches it). Several processes may share a folder: writes are atomic renames, a
 * reading deleted under a reader is a miss.
 *
 * Location: IWR_READINGS_CACHE_DIR (IWR_OCR_CACHE_DIR, its older name, is honoured),
 * else `.cache/image-readings` under the working directory; `off` keeps nothing.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { IwrError } from "../errors.ts";
import { parseTempName, writeFileAtomic } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";
import { moveAside } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";
import { METRIC_SETTINGS } from "./settings.ts";

const logger = log("evaluator");

const FORMAT = 1;
const HEADER = z.object({ format: z.literal(FORMAT), reader: z.string(), image: z.string() });
const READER_FILE = "reader.json";
const READER_RECORD = z.object({ format: z.literal(FORMAT), kind: z.string(), identity: z.string() });
/** A hit on a reading older than this refreshes its time, so the least recently used go first. */
const TOUCH_AFTER_MS = 3600_000;
/** After an eviction the readings fill at most this share of maxBytes (fewer, larger evictions). */
const EVICT_TO = 0.8;

/** Who read an image: `kind` ("ocr-text", "visual-features", …) and every setting that changes the reading. */
export interface ReaderName {
  kind: string;
  identity: string;
}

export interface ReadingStore {
  readonly dir: string;
  get(reader: ReaderName, imageKey: string): Promise<Buffer | undefined>;
  put(reader: ReaderName, imageKey: string, value: Buffer): Promise<void>;
}

export interface ReadingStoreStats {
  dir: string;
  entries: number;
  bytes: number;
  readers: Array<{ kind: string; identity: string; entries: number; bytes: number }>;
}

/** The store's size limit: IWR_READINGS_CACHE_MAX_MB (mebibytes), else METRIC_SETTINGS.readings.diskBytes. */
export function readingStoreLimitBytes(env: NodeJS.ProcessEnv = process.env): number {
  const configured = env.IWR_READINGS_CACHE_MAX_MB?.trim();
  if (!configured) return METRIC_SETTINGS.readings.diskBytes;
  const megabytes = Number(configured);
  if (!Number.isFinite(megabytes) || megabytes <= 0) {
    throw new IwrError("CONFIG_INVALID", `IWR_READINGS_CACHE_MAX_MB: expected a positive number of mebibytes, got '${configured}'`);
  }
  return Math.round(megabytes * 1024 * 1024);
}

/** The store's folder from the environment; undefined when switched off. */
export function defaultReadingStoreDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = (env.IWR_READINGS_CACHE_DIR ?? env.IWR_OCR_CACHE_DIR)?.trim();
  if (configured === "off") return undefined;
  return path.resolve(configured || path.join(".cache", "image-readings"));
}

const READER_FOLDER_NAME = /^[0-9a-f]{16}$/;

function readerFolder(reader: ReaderName): string {
  return sha256Hex(`${reader.kind}\n${reader.identity}`).slice(0, 16);
}

function readerLabel(reader: ReaderName): string {
  return `${reader.kind} ${reader.identity}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Every reading file under `dir` with its size and time; temps and reader records left out. */
async function listReadings(dir: string): Promise<Array<{ file: string; folder: string; bytes: number; mtimeMs: number }>> {
  let names: string[];
  try {
    names = await fsp.readdir(dir, { recursive: true, encoding: "utf8" });
  } catch {
    return [];
  }
  const found: Array<{ file: string; folder: string; bytes: number; mtimeMs: number }> = [];
  for (const name of names) {
    if (!name.endsWith(".bin") || parseTempName(path.basename(name)) || !READER_FOLDER_NAME.test(name.split(path.sep)[0] ?? "")) continue;
    const file = path.join(dir, name);
    try {
      const stat = await fsp.stat(file);
      found.push({ file, folder: name.split(path.sep)[0] ?? "", bytes: stat.size, mtimeMs: stat.mtimeMs });
    } catch {
      // Deleted meanwhile by another process's eviction.
    }
  }
  return found;
}

export function openReadingStore(dir: string, options: { maxBytes: number }): ReadingStore {
  const entryPath = (reader: ReaderName, imageKey: string) => path.join(dir, readerFolder(reader), imageKey.slice(0, 2), `${imageKey}.bin`);
  const recordedReaders = new Set<string>();
  /** Bytes under the folder as last counted plus what this process wrote since; counted on the first write. */
  let total: number | undefined;
  let counting: Promise<number> | undefined;
  let evicting: Promise<void> | undefined;

  const evict = async (): Promise<void> => {
    const readings = (await listReadings(dir)).sort((a, b) => a.mtimeMs - b.mtimeMs);
    let bytes = readings.reduce((sum, reading) => sum + reading.bytes, 0);
    const target = EVICT_TO * options.maxBytes;
    let removed = 0;
    for (const reading of readings) {
      if (bytes <= target) break;
      await fsp.rm(reading.file, { force: true });
      bytes -= reading.bytes;
      removed += 1;
    }
    if (removed > 0) logger.debug(`image readings: removed the ${removed} least recently used (${dir} over ${options.maxBytes} bytes)`);
    total = bytes;
  };

  const recordReader = async (reader: ReaderName): Promise<void> => {
    const folder = readerFolder(reader);
    if (recordedReaders.has(folder)) return;
    recordedReaders.add(folder);
    const file = path.join(dir, folder, READER_FILE);
    if (!fs.existsSync(file)) await writeFileAtomic(file, `${JSON.stringify({ format: FORMAT, kind: reader.kind, identity: reader.identity })}\n`);
  };

  return {
    dir,
    async get(reader, imageKey) {
      const file = entryPath(reader, imageKey);
      let raw: Buffer;
      let mtimeMs: number;
      try {
        [raw, { mtimeMs }] = await Promise.all([fsp.readFile(file), fsp.stat(file)]);
      } catch {
        return undefined;
      }
      const newline = raw.indexOf(10);
      try {
        const header = HEADER.parse(JSON.parse(raw.subarray(0, Math.max(0, newline)).toString("utf8")));
        if (newline >= 0 && header.reader === readerLabel(reader) && header.image === imageKey) {
          if (Date.now() - mtimeMs > TOUCH_AFTER_MS) {
            const now = new Date();
            void fsp.utimes(file, now, now).catch(() => undefined);
          }
          return raw.subarray(newline + 1);
        }
      } catch {
        // Falls through: a damaged entry is read again and rewritten.
      }
      moveAside(file, "not a reading of this image by this reader", "the image is read again");
      return undefined;
    },
    async put(reader, imageKey, value) {
      const file = entryPath(reader, imageKey);
      const header = Buffer.from(`${JSON.stringify({ format: FORMAT, reader: readerLabel(reader), image: imageKey })}\n`);
      try {
        await recordReader(reader);
        await writeFileAtomic(file, Buffer.concat([header, value]));
      } catch (error) {
        // The reading is still returned; only a later run has to read the image again.
        logger.warn(`image readings: could not write ${file}: ${errorText(error)}`);
        return;
      }
      if (total === undefined) {
        counting ??= listReadings(dir).then((readings) => readings.reduce((sum, reading) => sum + reading.bytes, 0));
        const counted = await counting;
        total ??= counted;
      }
      total += header.length + value.length;
      if (total > options.maxBytes && !evicting) {
        evicting = evict()
          .catch((error: unknown) => {
            logger.warn(`image readings: could not evict old readings in ${dir}: ${errorText(error)}`);
          })
          .finally(() => {
            evicting = undefined;
          });
        await evicting;
      }
    },
  };
}

/** What the store under `dir` holds, reader by reader. */
export async function readingStoreStats(dir: string): Promise<ReadingStoreStats> {
  const byFolder = new Map<string, { entries: number; bytes: number }>();
  for (const reading of await listReadings(dir)) {
    const tally = byFolder.get(reading.folder) ?? { entries: 0, bytes: 0 };
    tally.entries += 1;
    tally.bytes += reading.bytes;
    byFolder.set(reading.folder, tally);
  }
  const readers: ReadingStoreStats["readers"] = [];
  for (const [folder, tally] of byFolder) {
    let named: ReaderName = { kind: "unknown", identity: folder };
    try {
      named = READER_RECORD.parse(JSON.parse(await fsp.readFile(path.join(dir, folder, READER_FILE), "utf8")));
    } catch {
      // A folder without its record (written by a process that was killed): shown by its hash.
    }
    readers.push({ kind: named.kind, identity: named.identity, ...tally });
  }
  readers.sort((a, b) => b.bytes - a.bytes);
  return {
    dir,
    entries: readers.reduce((sum, reader) => sum + reader.entries, 0),
    bytes: readers.reduce((sum, reader) => sum + reader.bytes, 0),
    readers,
  };
}

/** Deletes every reading under `dir`: the reader folders only, so a folder given by mistake loses nothing else. */
export async function clearReadingStore(dir: string): Promise<{ removedEntries: number; removedBytes: number }> {
  const stats = await readingStoreStats(dir);
  let names: string[] = [];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return { removedEntries: 0, removedBytes: 0 };
  }
  const readerFolders = names.filter((name) => READER_FOLDER_NAME.test(name));
  await Promise.all(readerFolders.map((name) => fsp.rm(path.join(dir, name), { recursive: true, force: true })));
  return { removedEntries: stats.entries, removedBytes: stats.bytes };
}
