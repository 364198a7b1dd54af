/**
 * Images a model request carries (frames, asset sheets), kept on disk by content:
 * `<dir>/<sha256>.png`. Graph state names them by path and hash, never by their bytes
 * (image data in state is copied into every checkpoint); the bytes are read back only
 * when the request is sent.
 */
import fs from "node:fs";
import path from "node:path";
import { writeFileAtomicSync } from "../files/atomic.ts";
import { sha256Hex } from "../files/content-hash.ts";

export interface StoredImage {
  path: string;
  sha256: string;
}

/** Where requests' images go unless a caller names a folder: `.cache/request-images`, or IWR_REQUEST_IMAGES_DIR. */
export function defaultRequestImagesDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.IWR_REQUEST_IMAGES_DIR || path.join(".cache", "request-images"));
}

/** Writes `data` under its hash in `dir` (once: the same bytes are the same file). */
export function storeByContent(dir: string, data: string | Buffer, extension: string): StoredImage {
  const sha256 = sha256Hex(data);
  const file = path.join(dir, `${sha256}.${extension}`);
  if (!fs.existsSync(file)) writeFileAtomicSync(file, data);
  return { path: file, sha256 };
}
