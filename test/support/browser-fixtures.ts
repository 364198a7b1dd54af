/** Shared bits of the browser tests: fixture folders, raw HTTP requests, temp folders. */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures");

/** Untrusted pages that misbehave in one way each. */
export const HOSTILE_PAGES_DIR = path.join(fixtures, "hostile");
/** A well-behaved page (`site/`) whose image lives in a separate folder (`assets/`). */
export const NORMAL_SITE_DIR = path.join(fixtures, "host", "site");
export const NORMAL_ASSETS_DIR = path.join(fixtures, "host", "assets");

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A request with the path sent byte for byte: `fetch` and `new URL` would tidy `..`
 * and backslashes away before the server ever saw them.
 */
export function rawRequest(origin: string, rawPath: string, options: { method?: string; headers?: http.OutgoingHttpHeaders } = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: hostname, port, path: rawPath, method: options.method ?? "GET", headers: options.headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end();
  });
}

export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `iwr-${prefix}-`));
}
