/**
 * The run's content-addressed store, `<agent folder>/store/<sha256>.<ext>`: frames,
 * storyboards, critiques and pages. State keeps the path and the hash; a resumed node
 * that writes the same bytes again writes the same file (writes are idempotent). Text is
 * redacted on its way in (agent-files.ts), and the hash is the redacted text's.
 */
import fs from "node:fs";
import { IwrError } from "../../src/errors.ts";
import { sha256Hex } from "../../src/files/content-hash.ts";
import { storeByContent } from "../../src/media/image-store.ts";
import { agentWorkFiles } from "../../src/results/layout.ts";
import { agentText } from "./agent-files.ts";
import type { StoredFile } from "./state.ts";

/** Stores `data` under its hash in the agent's store (text redacted first); returns its path and hash. */
export function storeFile(workDir: string, data: string | Buffer, extension: string): StoredFile {
  return storeByContent(agentWorkFiles(workDir).store, agentText(data), extension);
}

/** Reads a stored file back, checking it is the one state names. */
export function readStored(file: StoredFile): Buffer {
  let data: Buffer;
  try {
    data = fs.readFileSync(file.path);
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `the agent's stored file ${file.path} is missing (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      file: file.path,
    });
  }
  if (sha256Hex(data) !== file.sha256)
    throw new IwrError("CONFIG_INVALID", `the agent's stored file ${file.path} changed since it was written (hash mismatch)`, { file: file.path });
  return data;
}

export const readStoredText = (file: StoredFile): string => readStored(file).toString("utf8");
