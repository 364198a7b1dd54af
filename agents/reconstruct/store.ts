/**
 * The run's content-addressed store, `<agent folder>/store/<sha256>.<ext>`: frames,
 * storyboards, critiques and pages. State keeps the path and the hash; a resumed node
 * that writes the same bytes again writes the same file (writes are idempotent).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../../src/errors.ts";
import { writeFileAtomicSync } from "../../src/files/atomic.ts";
import { agentFiles } from "../../src/results/layout.ts";
import type { StoredFile } from "./state.ts";

export function sha256Of(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Stores `data` under its hash; returns its path and hash. */
export function storeFile(workDir: string, data: string | Buffer, extension: string): StoredFile {
  const sha256 = sha256Of(data);
  const file = path.join(agentFiles(workDir).store, `${sha256}.${extension}`);
  if (!fs.existsSync(file)) writeFileAtomicSync(file, data);
  return { path: file, sha256 };
}

/** Reads a stored file back, checking it is the one state names. */
export function readStored(file: StoredFile): Buffer {
  let data: Buffer;
  try {
    data = fs.readFileSync(file.path);
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `the agent's stored file ${file.path} is missing (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { file: file.path });
  }
  if (sha256Of(data) !== file.sha256) throw new IwrError("CONFIG_INVALID", `the agent's stored file ${file.path} changed since it was written (hash mismatch)`, { file: file.path });
  return data;
}

export const readStoredText = (file: StoredFile): string => readStored(file).toString("utf8");
