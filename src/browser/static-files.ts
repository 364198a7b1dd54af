/**
 * Sending one file from disk over HTTP: content type by extension, no caching
 * (a candidate page may be rewritten between two openings), and byte ranges so a
 * <video> can seek the way it does on a real web server.
 */
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";

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
  ".bmp": "image/bmp",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
};

export function contentType(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream";
}

export type ByteRange = { start: number; end: number } | "unsatisfiable";

/**
 * Reads a `Range` header against a file of `size` bytes: `bytes=a-b`, `bytes=a-`
 * and the suffix form `bytes=-n` (the last n bytes). Anything else, or a range that
 * starts past the end, is unsatisfiable (the caller answers 416).
 */
export function parseByteRange(header: string, size: number): ByteRange {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (!match[1] && !match[2])) return "unsatisfiable";
  if (!match[1]) {
    const suffixLength = Number(match[2]);
    if (suffixLength === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffixLength), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
  if (start >= size || start > end) return "unsatisfiable";
  return { start, end };
}

export function sendPlain(res: http.ServerResponse, status: number, text: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", ...headers }).end(text);
}

/** Streams `file` (already checked to be a regular file of `size` bytes), honouring Range. */
export function sendFile(req: http.IncomingMessage, res: http.ServerResponse, file: string, size: number): void {
  const headers: http.OutgoingHttpHeaders = {
    "Content-Type": contentType(file),
    "Accept-Ranges": "bytes",
    "Cache-Control": "no-store",
  };
  let streamOptions: { start: number; end: number } | undefined;
  if (req.headers.range) {
    const range = parseByteRange(req.headers.range, size);
    if (range === "unsatisfiable") {
      res.writeHead(416, { "Content-Range": `bytes */${size}`, "Cache-Control": "no-store" }).end();
      return;
    }
    streamOptions = range;
    res.writeHead(206, {
      ...headers,
      "Content-Range": `bytes ${range.start}-${range.end}/${size}`,
      "Content-Length": range.end - range.start + 1,
    });
  } else {
    res.writeHead(200, { ...headers, "Content-Length": size });
  }
  if (req.method === "HEAD" || size === 0) {
    res.end();
    return;
  }
  const stream = fs.createReadStream(file, streamOptions);
  // The headers are gone already; a read error can only cut the response short.
  stream.on("error", () => res.destroy());
  stream.pipe(res);
}
