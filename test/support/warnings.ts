/**
 * The warnings the process-wide logger gives while a test runs, read from a JSON-lines
 * log file (the console stays quiet). `stop()` puts the logger back as the CLI sets it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { configureLogger, log } from "../../src/log/logger.ts";

export interface WarningCapture {
  /** Every warning and error message so far (waits for the file transport to catch up). */
  messages(): Promise<string[]>;
  stop(): void;
}

let marks = 0;

/**
 * The warnings and errors in a JSON-lines log file the process-wide logger writes to now
 * (`iwr --log-file`, or captureWarnings). The file transport writes asynchronously: a marker
 * line logged here says everything before it is there.
 */
export async function warningsInLog(file: string): Promise<string[]> {
  const marker = `capture-mark-${process.pid}-${++marks}`;
  log("test").warn(marker);
  for (let attempt = 0; attempt < 100; attempt++) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    if (text.includes(marker)) {
      return text
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as { level: string; message: string })
        .filter((entry) => (entry.level === "warn" || entry.level === "error") && !entry.message.startsWith("capture-mark-"))
        .map((entry) => entry.message);
    }
    await sleep(20);
  }
  throw new Error(`the log file ${file} never received its marker`);
}

export function captureWarnings(): WarningCapture {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-warnings-"));
  const file = path.join(dir, "log.jsonl");
  configureLogger({ level: "warn", file, silentConsole: true });
  return {
    messages: () => warningsInLog(file),
    stop() {
      configureLogger({ level: "info" });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
