import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configureLogger, log } from "../../src/log/logger.ts";
import { registerSecret } from "../../src/log/redact.ts";

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "iwr-log-"));
});
afterAll(async () => {
  configureLogger({ level: "info" });
  await fs.rm(dir, { recursive: true, force: true });
});

/** The file transport writes asynchronously: wait until the closing marker line is there. */
async function readLogUntil(file: string, marker: string): Promise<string> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const text = await fs.readFile(file, "utf8").catch(() => "");
    if (text.includes(marker)) return text;
    await sleep(50);
  }
  throw new Error(`log file ${file} never received '${marker}'`);
}

describe("the JSON-lines log file", () => {
  it("never holds a secret, wherever it appears in a log call", async () => {
    const file = path.join(dir, "run.jsonl");
    configureLogger({ level: "debug", file, silentConsole: true });
    const openAiKey = "sk-proj-Abc123def456GHI789jkl";
    const bearer = "eyJhbGciOiJIUzI1NiJ9.payload.signature";
    const registered = "hunter2-registered-value";
    const nestedKey = "plain-looking-key-value";
    registerSecret(registered);

    const logger = log("models");
    logger.info(`calling the model with key ${openAiKey}`);
    logger.debug("request headers", { headers: { "Content-Type": "application/json", Authorization: `Bearer ${bearer}` } });
    logger.warn(`raw header line: Authorization: Bearer ${bearer}`);
    logger.info("environment", { note: `OPENAI_API_KEY came out as ${registered}` });
    logger.error("the call failed", { spec: { name: "gpt-4o", provider: { apiKey: nestedKey, baseURL: "http://127.0.0.1:1/v1" } } });
    logger.error("rejected", { error: new Error(`401 for key ${openAiKey} (${registered})`) });
    logger.info("printf-style %s and %s", registered, openAiKey);
    logger.info("done-marker");

    const text = await readLogUntil(file, "done-marker");
    const records = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(8);
    for (const secret of [openAiKey, bearer, registered, nestedKey]) expect(text).not.toContain(secret);
    expect(text.match(/\[REDACTED\]/g)?.length).toBeGreaterThanOrEqual(7);
    // What is not secret stays readable, so the log is still useful.
    expect(records[4]).toMatchObject({ level: "error", scope: "models", spec: { name: "gpt-4o", provider: { baseURL: "http://127.0.0.1:1/v1" } } });
    expect(records[1]).toMatchObject({ headers: { "Content-Type": "application/json" } });
    expect(records[5]).toMatchObject({ error: { name: "Error", message: "401 for key [REDACTED] ([REDACTED])" } });
    expect(records[6]).toMatchObject({ message: "printf-style [REDACTED] and [REDACTED]" });
  });

  it("takes every level down to debug, whatever the console level", async () => {
    const file = path.join(dir, "quiet.jsonl");
    configureLogger({ level: "warn", file, silentConsole: true });
    log("tasks").debug("debug-line");
    log("tasks").info("info-line");
    log("tasks").warn("warn-marker");
    const text = await readLogUntil(file, "warn-marker");
    expect(text).toContain("debug-line");
    expect(text).toContain("info-line");
  });
});
