/**
 * A small HTTP server for the at-rest tests: serves a folder (and a few files made in
 * memory) on 127.0.0.1, and answers any request with `?slow=<ms>` that much later, so a
 * web font or an image is late for real.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const SETTLE_PAGES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "settle");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".png": "image/png",
  ".woff": "font/woff",
  ".js": "text/javascript",
  ".css": "text/css",
};

export interface SlowServer {
  readonly origin: string;
  url(file: string): string;
  close(): Promise<void>;
}

export async function startSlowServer(dir: string, extra: Record<string, Buffer> = {}): Promise<SlowServer> {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const name = decodeURIComponent(url.pathname.slice(1)) || "index.html";
    const body = extra[name] ?? (!name.includes("..") && fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name)) : undefined);
    const answer = () => {
      if (!body) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": TYPES[path.extname(name)] ?? "application/octet-stream", "cache-control": "no-store" }).end(body);
    };
    const delay = Number(url.searchParams.get("slow") ?? 0);
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    url: (file) => `${origin}/${file}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
