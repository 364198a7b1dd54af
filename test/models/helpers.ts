/** Fixtures shared by the model-layer tests (not a test file itself). */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HumanMessage } from "@langchain/core/messages";
import sharp from "sharp";
import { type ModelSpec, type ModelSpecInput, ModelSpecSchema } from "../../src/models/index.ts";
import { userMessage as buildUserMessage } from "../../src/models/message.ts";

/** A key that looks real (so pattern redaction alone would also catch it) and is unique to these tests. */
export const TEST_KEY = "sk-iwrtest-Zq8VbN3xY7wLk2Pp";
export const TEST_KEY_ENV = "IWR_TEST_MODEL_KEY";

/** A spec against the fake server with fast retries; the key comes from TEST_KEY_ENV. */
export function specFor(baseURL: string, overrides: Partial<ModelSpecInput> = {}): ModelSpec {
  return ModelSpecSchema.parse({
    name: "gpt-4o",
    baseURL,
    apiKeyEnv: TEST_KEY_ENV,
    maxTokens: 1234,
    timeoutMs: 10_000,
    retryBaseDelayMs: 20,
    retryMaxDelayMs: 3_000,
    ...overrides,
  });
}

export async function tinyPng(red: number, green: number, blue: number): Promise<Buffer> {
  return sharp({ create: { width: 4, height: 3, channels: 3, background: { r: red, g: green, b: blue } } })
    .png()
    .toBuffer();
}

export function dataURL(png: Buffer): string {
  return `data:image/png;base64,${png.toString("base64")}`;
}

/** One user message: the text, then every image in the given order (always a list of parts, as the tests' requests were built). */
export function userMessage(text: string, images: Buffer[] = []): HumanMessage {
  return buildUserMessage(text, images);
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `iwr-${prefix}-`));
}

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}
