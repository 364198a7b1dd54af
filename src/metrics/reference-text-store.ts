/**
 * OCR texts of reference checkpoints, kept on disk between runs. A checkpoint is the
 * same picture for every candidate of every model, and reading a 720p screen costs
 * ~0.4 s of CPU: an experiment scoring N models on a suite would read each one N times.
 * Here it is read once per OCR engine setup; the next run finds the text by the image's
 * content hash.
 *
 * One JSON file per image under `<dir>/<engine key>/<sha256>.json`, written atomically.
 * The engine key covers name, version and every option that changes what is read, so a
 * new engine never gets an old engine's text. An entry that does not parse, or names
 * another image or engine, is ignored (and replaced), never trusted.
 *
 * Location: IWR_OCR_CACHE_DIR, else `.cache/ocr-text` under the working directory;
 * IWR_OCR_CACHE_DIR=off keeps nothing on disk.
 */
import { createHash } from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../files/atomic.ts";
import { moveAside } from "../files/verified-read.ts";
import { log } from "../log/logger.ts";

const logger = log("evaluator");

export interface ReferenceTextStore {
  get(engineKey: string, sha256: string): Promise<string | undefined>;
  put(engineKey: string, sha256: string, text: string): Promise<void>;
}

const ENTRY = z.object({ version: z.literal(1), engine: z.string(), sha256: z.string(), text: z.string() });

/** The store's folder from the environment; undefined when switched off. */
export function defaultReferenceTextDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env.IWR_OCR_CACHE_DIR?.trim();
  if (configured === "off") return undefined;
  return path.resolve(configured || path.join(".cache", "ocr-text"));
}

/** A short folder name for an engine identity such as "tesseract.js@7.0.0 core@7.0.0 … psm 3 dpi 96 text-format 1". */
function engineFolder(engineKey: string): string {
  return createHash("sha256").update(engineKey).digest("hex").slice(0, 16);
}

export function openReferenceTextStore(dir: string): ReferenceTextStore {
  const entryPath = (engineKey: string, sha256: string) => path.join(dir, engineFolder(engineKey), `${sha256}.json`);
  return {
    async get(engineKey, sha256) {
      let raw: string;
      try {
        raw = await fsp.readFile(entryPath(engineKey, sha256), "utf8");
      } catch {
        return undefined;
      }
      try {
        const entry = ENTRY.parse(JSON.parse(raw));
        if (entry.engine === engineKey && entry.sha256 === sha256) return entry.text;
      } catch {
        // Falls through: a damaged entry is read again and rewritten.
      }
      moveAside(entryPath(engineKey, sha256), "not an OCR text entry of this image and engine", "the image is read again");
      return undefined;
    },
    async put(engineKey, sha256, text) {
      const file = entryPath(engineKey, sha256);
      try {
        await fsp.mkdir(path.dirname(file), { recursive: true });
        await writeFileAtomic(file, `${JSON.stringify({ version: 1, engine: engineKey, sha256, text })}\n`);
      } catch (error) {
        // The text is still returned; only the next run has to read the image again.
        logger.warn(`OCR text cache: could not write ${file}: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}
