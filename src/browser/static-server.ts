/**
 * A static file server on 127.0.0.1 rooted at one folder: how generated pages,
 * reference pages and bundled sites are opened (never file://, so video and canvas
 * behave as on the web, and every other origin can be blocked by its address).
 * Range requests are honoured (video seeking); paths leaving the root get 403.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".avif": "image/avif",
  ".ico": "image/x-icon",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
};

export interface StaticServer {
  /** e.g. `http://127.0.0.1:41234` */
  readonly origin: string;
  readonly root: string;
  /** Absolute URL of a path relative to the root. */
  url(relativePath?: string): string;
  close(): Promise<void>;
}

function contentType(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream";
}

/** Resolves a request path inside root, or undefined when it escapes it. */
export function resolveInsideRoot(root: string, requestPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(requestPath);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0")) return undefined;
  const resolved = path.resolve(root, "." + path.posix.normalize("/" + decoded.replace(/\\/g, "/")));
  const relative = path.relative(root, resolved);
  if (relative.startsWith("..") || path.isAbsolute(relative)) return undefined;
  // A raw `..` segment is refused outright, even when normalisation would keep it inside.
  if (decoded.split(/[\\/]/).includes("..")) return undefined;
  return resolved;
}

function serveFile(req: http.IncomingMessage, res: http.ServerResponse, file: string, size: number): void {
  const headers: http.OutgoingHttpHeaders = {
    "Content-Type": contentType(file),
    "Accept-Ranges": "bytes",
    "Cache-Control": "no-store",
  };
  const range = req.headers.range;
  if (range) {
    const match = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
    let start = match?.[1] ? Number(match[1]) : NaN;
    let end = match?.[2] ? Number(match[2]) : size - 1;
    if (match && !match[1] && match[2]) {
      start = Math.max(0, size - Number(match[2])); // suffix range: last N bytes
      end = size - 1;
    }
    if (!match || Number.isNaN(start) || start > end || start >= size) {
      res.writeHead(416, { "Content-Range": `bytes */${size}` }).end();
      return;
    }
    end = Math.min(end, size - 1);
    res.writeHead(206, { ...headers, "Content-Range": `bytes ${start}-${end}/${size}`, "Content-Length": end - start + 1 });
    if (req.method === "HEAD") return void res.end();
    fs.createReadStream(file, { start, end }).pipe(res);
    return;
  }
  res.writeHead(200, { ...headers, "Content-Length": size });
  if (req.method === "HEAD") return void res.end();
  fs.createReadStream(file).pipe(res);
}

export async function startStaticServer(rootFolder: string): Promise<StaticServer> {
  const root = path.resolve(rootFolder);
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    const pathname = (req.url ?? "/").split("?")[0]!.split("#")[0]!;
    const resolved = resolveInsideRoot(root, pathname);
    if (!resolved) {
      res.writeHead(403, { "Content-Type": "text/plain" }).end("403 outside the served folder");
      return;
    }
    let file = resolved;
    fs.stat(file, (statError, stat) => {
      if (!statError && stat.isDirectory()) {
        file = path.join(file, "index.html");
        fs.stat(file, (indexError, indexStat) => {
          if (indexError || !indexStat.isFile()) res.writeHead(404, { "Content-Type": "text/plain" }).end("404");
          else serveFile(req, res, file, indexStat.size);
        });
        return;
      }
      if (statError || !stat.isFile()) {
        res.writeHead(404, { "Content-Type": "text/plain" }).end("404");
        return;
      }
      serveFile(req, res, file, stat.size);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    root,
    url: (relativePath = "") => `${origin}/${relativePath.split("/").map(encodeURIComponent).join("/")}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
