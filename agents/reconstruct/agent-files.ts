/**
 * The agent's write boundary. Every file the agent writes itself (its store, its drafts'
 * pages, their feedback) passes through `agentText` on its way to disk: a model may echo
 * the API key into any text it returns (a storyboard, a defect, a page, a reply that does
 * not parse), and no such text may reach a file. Images are written as they are.
 */
import { writeFileAtomicSync } from "../../src/files/atomic.ts";
import { redactString } from "../../src/log/redact.ts";

/** The one redaction at the agent's write boundary: text with secrets masked; binary data (images) unchanged. */
export function agentText(data: string): string;
export function agentText(data: string | Buffer): string | Buffer;
export function agentText(data: string | Buffer): string | Buffer {
  return typeof data === "string" ? redactString(data) : data;
}

/** Writes one of the agent's own files (a draft's page, its feedback) atomically, text redacted. */
export function writeAgentFile(file: string, data: string | Buffer): void {
  writeFileAtomicSync(file, agentText(data));
}
