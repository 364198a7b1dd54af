/**
 * One read per image content. Every reading of an image by a measuring engine (OCR text,
 * visual features, the self-check's grey pixels) goes through `readOnce`: keyed by the
 * image's content and the reader's identity, computed at most once per process (callers
 * asking at the same time share one computation) and kept on disk across runs
 * (reading-store.ts).
 *
 * The content key is the decoded pixels, not the file's bytes: a screenshot equal to
 * the previous one, or to a checkpoint, is the same picture even when another encoder
 * wrote it. Decoding costs ~7-10 ms a 720p screen against ~500 ms for an OCR read; a
 * file's key is remembered by its bytes' hash, so the same bytes are decoded once (and
 * their pixels are kept a while for the other engines: decoded-pictures.ts).
 *
 * The counts (asked, answered from memory, from disk, read) are kept per kind, for the
 * benchmarks and the run's summary.
 */
import { createHash } from "node:crypto";
import { sha256Hex } from "../files/content-hash.ts";
import { log } from "../log/logger.ts";
import { type DecodedPixels, decodedPixels, forgetDecodedPictures, pictureBytesHash } from "./decoded-pictures.ts";
import { defaultReadingStoreDir, openReadingStore, type ReaderName, type ReadingStore, readingStoreLimitBytes } from "./reading-store.ts";
import { METRIC_SETTINGS } from "./settings.ts";

const logger = log("evaluator");

/** One way of reading an image: its name, the work, and how a reading is kept on disk. */
export interface ImageReader<T> extends ReaderName {
  read(image: Buffer): Promise<T>;
  encode(value: T): Buffer;
  /** undefined: the stored bytes are not a reading of this reader (then the image is read again). */
  decode(stored: Buffer): T | undefined;
  /** Bytes the reading holds in memory (for the memory bound). */
  size(value: T): number;
}

export interface ReadingCounts {
  /** Readings asked for. */
  asked: number;
  /** Answered from this process's memory (including a reading in progress). */
  memory: number;
  /** Answered from the on-disk store. */
  disk: number;
  /** Computed by the engine. */
  read: number;
}

const bytesToKey = new Map<string, Promise<string>>();
const KEY_MEMO_ENTRIES = 16_384;

function keyOfPixels({ data, info }: DecodedPixels): string {
  return createHash("sha256")
    .update(`pixels ${info.width}x${info.height}x${info.channels} ${data.BYTES_PER_ELEMENT * 8}\n`)
    .update(data)
    .digest("hex");
}

async function pixelKey(image: Buffer): Promise<string> {
  try {
    return keyOfPixels(await decodedPixels(image));
  } catch {
    // Not an image sharp decodes: its bytes are all there is to key (the reader will say what is wrong with it).
    return sha256Hex(image);
  }
}

function rememberKey(bytes: string, key: Promise<string>): void {
  bytesToKey.set(bytes, key);
  if (bytesToKey.size > KEY_MEMO_ENTRIES) bytesToKey.delete(bytesToKey.keys().next().value!);
}

/** The content key of an image: the hash of its decoded pixels (of its bytes when it does not decode). */
export function imageContentKey(image: Buffer): Promise<string> {
  const bytes = pictureBytesHash(image);
  let key = bytesToKey.get(bytes);
  if (!key) {
    key = pixelKey(image);
    rememberKey(bytes, key);
  }
  return key;
}

/**
 * Remembers the content key of an image just encoded from `pixels` (a crop prepared for
 * OCR), so keying its reading needs no decoding. The caller vouches that decoding `image`
 * gives `pixels`.
 */
export function rememberImagePixels(image: Buffer, pixels: DecodedPixels): void {
  rememberKey(pictureBytesHash(image), Promise.resolve(keyOfPixels(pixels)));
}

interface Remembered {
  value: Promise<unknown>;
  bytes: number;
}

/** Readings of this process, least recently used first; bounded by METRIC_SETTINGS.readings.memoryBytes. */
const memory = new Map<string, Remembered>();
let memoryBytes = 0;
const counts = new Map<string, ReadingCounts>();

function remember(key: string, entry: Remembered): void {
  memory.set(key, entry);
  memoryBytes += entry.bytes;
  const limit = METRIC_SETTINGS.readings.memoryBytes;
  for (const [oldest, old] of memory) {
    if (memoryBytes <= limit || oldest === key) break;
    memory.delete(oldest);
    memoryBytes -= old.bytes;
  }
}

function forget(key: string, entry: Remembered): void {
  if (memory.get(key) !== entry) return;
  memory.delete(key);
  memoryBytes -= entry.bytes;
}

/** Unset until first used or set; then the store, or "off". */
let store: ReadingStore | "off" | undefined;

/** Where readings are kept between runs (undefined: nowhere). Default: defaultReadingStoreDir(). */
export function setReadingStoreDir(dir: string | undefined): void {
  store = dir === undefined ? "off" : openReadingStore(dir, { maxBytes: readingStoreLimitBytes() });
}

function readingStore(): ReadingStore | undefined {
  if (store === undefined) setReadingStoreDir(defaultReadingStoreDir());
  return store === "off" ? undefined : store;
}

function countsOf(kind: string): ReadingCounts {
  let tally = counts.get(kind);
  if (!tally) {
    tally = { asked: 0, memory: 0, disk: 0, read: 0 };
    counts.set(kind, tally);
  }
  return tally;
}

function decodeOrNothing<T>(reader: ImageReader<T>, stored: Buffer): T | undefined {
  try {
    return reader.decode(stored);
  } catch {
    // A damaged entry: read the image again (the new reading replaces it).
    return undefined;
  }
}

async function fromDisk<T>(reader: ImageReader<T>, key: string): Promise<T | undefined> {
  const stored = await readingStore()?.get(reader, key);
  return stored === undefined ? undefined : decodeOrNothing(reader, stored);
}

async function fromDiskOrRead<T>(reader: ImageReader<T>, image: Buffer, imageKey: string, tally: ReadingCounts): Promise<T> {
  const stored = await fromDisk(reader, imageKey);
  if (stored !== undefined) {
    tally.disk += 1;
    return stored;
  }
  tally.read += 1;
  const value = await reader.read(image);
  await readingStore()?.put(reader, imageKey, reader.encode(value));
  return value;
}

/**
 * The reading kept in this process's memory under `key` (then `onMemoryHit` is called),
 * else the one `compute` makes, kept from then on; a failed one is forgotten.
 */
async function remembered<T>(reader: ImageReader<T>, key: string, compute: () => Promise<T>, onMemoryHit: () => void): Promise<T> {
  const memoryKey = `${reader.kind}\n${reader.identity}\n${key}`;
  const known = memory.get(memoryKey);
  if (known) {
    onMemoryHit();
    // Most recently used goes last.
    memory.delete(memoryKey);
    memory.set(memoryKey, known);
    return known.value as Promise<T>;
  }
  const entry: Remembered = { value: compute(), bytes: 0 };
  remember(memoryKey, entry);
  try {
    const value = (await entry.value) as T;
    if (memory.get(memoryKey) === entry) {
      const bytes = reader.size(value);
      entry.bytes = bytes;
      memoryBytes += bytes;
    }
    return value;
  } catch (error) {
    forget(memoryKey, entry);
    throw error;
  }
}

/** The reader's reading of the image: from memory, from disk, or read now (and kept). A failed reading is not kept. */
export async function readOnce<T>(reader: ImageReader<T>, image: Buffer): Promise<T> {
  const tally = countsOf(reader.kind);
  tally.asked += 1;
  const imageKey = await imageContentKey(image);
  return remembered(
    reader,
    imageKey,
    () => fromDiskOrRead(reader, image, imageKey, tally),
    () => {
      tally.memory += 1;
    },
  );
}

/**
 * The reader's reading of an image made from `source` by `recipe` (a crop prepared for
 * OCR, say), keyed by the source's content and the recipe: an image already made and read
 * is neither made nor decoded again, in this process or in a later run. `derive` must give
 * the same pixels for the same source and recipe, so a recipe names the version of the
 * code that makes it. The image made goes through readOnce: two recipes that give the same
 * picture share one reading.
 */
export async function readDerivedOnce<T>(reader: ImageReader<T>, source: Buffer, recipe: string, derive: () => Promise<Buffer>): Promise<T> {
  const derivedKey = sha256Hex(`derived\n${await imageContentKey(source)}\n${recipe}`);
  // Each request is counted once: here when this key answers it, else by readOnce for the image made.
  const tally = countsOf(reader.kind);
  const answered = (where: "memory" | "disk") => {
    tally.asked += 1;
    tally[where] += 1;
  };
  return remembered(
    reader,
    derivedKey,
    async () => {
      const stored = await fromDisk(reader, derivedKey);
      if (stored !== undefined) {
        answered("disk");
        return stored;
      }
      let image: Buffer;
      try {
        image = await derive();
      } catch (error) {
        // Asked and not answered, as a failed read is in readOnce.
        tally.asked += 1;
        throw error;
      }
      const reading = await readOnce(reader, image);
      await readingStore()?.put(reader, derivedKey, reader.encode(reading));
      return reading;
    },
    () => answered("memory"),
  );
}

/** The counts of every kind read so far in this process (a copy). */
export function readingCounts(): Record<string, ReadingCounts> {
  return Object.fromEntries([...counts].map(([kind, tally]) => [kind, { ...tally }]));
}

/** Share of the asked readings answered without reading (from memory or disk); undefined when none was asked. */
export function hitRate(tally: ReadingCounts): number | undefined {
  return tally.asked === 0 ? undefined : (tally.memory + tally.disk) / tally.asked;
}

/** What other modules derived from readings and keep in memory; forgotten with them. */
const derivedForgetters: Array<() => void> = [];

/**
 * Registers a module's memory of what it derived from readings (the judge's reading of a
 * true page's change), so that forgetting the readings forgets it too: a process that
 * "forgot" its readings and still answered from what it made of them would not read again.
 */
export function forgetWithReadings(forget: () => void): void {
  derivedForgetters.push(forget);
}

/** Forgets this process's readings and counts, and what was derived from them (the disk store stays). */
export function forgetReadings(): void {
  memory.clear();
  memoryBytes = 0;
  counts.clear();
  bytesToKey.clear();
  forgetDecodedPictures();
  for (const forget of derivedForgetters) forget();
  logger.debug("image readings: memory cleared");
}
