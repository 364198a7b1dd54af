/**
 * Pages of the run. The store keeps each page with the assets placeholder in place (what
 * a revision shows the model, so it keeps the benchmark's convention); a page is resolved
 * for the folder it is written to, as the single-pass generator resolves its own.
 */
import fs from "node:fs";
import { assetsBasePath, extractPageFromReply } from "../../src/generation/page-from-reply.ts";
import { agentWorkFiles, candidateFiles } from "../../src/results/layout.ts";
import { ASSET_PLACEHOLDER } from "../../src/tasks/inputs.ts";
import { writeAgentFile } from "./agent-files.ts";
import type { StoredFile } from "./state.ts";
import { readStoredText, storeFile } from "./store.ts";

/** The page inside a reply, placeholder kept, in the store. Throws MODEL_REPLY when there is none. */
export function storePageFromReply(workDir: string, reply: string): StoredFile {
  // A reply may quote the API key (a model echoing its instructions): storeFile redacts every text it keeps.
  return storeFile(workDir, extractPageFromReply(reply, ASSET_PLACEHOLDER), "html");
}

export function storePage(workDir: string, html: string): StoredFile {
  return storeFile(workDir, html, "html");
}

/** Writes a stored page as `<dir>/index.html`, its asset paths resolved for that folder. */
export function writePageTo(dir: string, page: StoredFile, assetsDir: string): string {
  const html = readStoredText(page).split(ASSET_PLACEHOLDER).join(assetsBasePath(dir, assetsDir));
  const file = candidateFiles(dir).page;
  writeAgentFile(file, html);
  return file;
}

/** `iterations/<id>/`, with the draft's page in it. */
export function writeIterationPage(workDir: string, id: number, page: StoredFile, assetsDir: string): string {
  const dir = agentWorkFiles(workDir).iteration(id);
  fs.mkdirSync(dir, { recursive: true });
  writePageTo(dir, page, assetsDir);
  return dir;
}
