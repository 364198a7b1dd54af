/**
 * A static file server on 127.0.0.1: how generated pages, reference pages and
 * bundled sites are opened (never file://, so video and canvas behave as on the web,
 * and every other origin can be blocked by its address).
 *
 * It serves one folder, or several folders "mounted" at URL prefixes: the evaluator
 * mounts a candidate's folder at "/" and the task's assets folder at the URL path the
 * candidate's relative asset links resolve to. The longest matching prefix wins, with
 * no fall-through to shorter mounts, so which file answers a URL never depends on
 * what happens to exist on disk.
 *
 * Anything that could leave a mounted folder (`..` segments, also percent-encoded,
 * backslashes, NUL bytes, symbolic links pointing outside) is refused with 403.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { IwrError } from "../errors.ts";
import { sendFile, sendPlain } from "./static-files.ts";

export interface Mount {
  /** URL prefix, e.g. "/" or "/tasks/iwr-mini/3/assets/" (a trailing "/" is added when missing). */
  urlPath: string;
  /** Folder served under that prefix. */
  dir: string;
}

export interface StaticServer {
  /** e.g. `http://127.0.0.1:41234` */
  readonly origin: string;
  /** The folder mounted at "/", or else the one with the shortest prefix. */
  readonly root: string;
  /** The mounts as served: prefixes normalised, folders absolute, longest prefix first. */
  readonly mounts: readonly Mount[];
  /** Absolute URL of a path relative to "/" (each segment percent-encoded). */
  url(relativePath?: string): string;
  close(): Promise<void>;
}

function normaliseUrlPath(urlPath: string): string {
  if (!urlPath.startsWith("/")) {
    throw new IwrError("IO", `static server mount: urlPath: expected a path starting with "/", got ${JSON.stringify(urlPath)}`);
  }
  if (urlPath.split("/").some((segment) => segment === ".." || segment === ".") || /[\\\0?#]/.test(urlPath)) {
    throw new IwrError("IO", `static server mount: urlPath: expected a plain path, got ${JSON.stringify(urlPath)}`);
  }
  return urlPath.endsWith("/") ? urlPath : `${urlPath}/`;
}

async function resolveMounts(mounts: readonly Mount[]): Promise<Mount[]> {
  if (mounts.length === 0) throw new IwrError("IO", "static server: mounts: expected at least one mount, got none");
  const resolved: Mount[] = [];
  for (const mount of mounts) {
    const urlPath = normaliseUrlPath(mount.urlPath);
    if (resolved.some((other) => other.urlPath === urlPath)) {
      throw new IwrError("IO", `static server mount ${urlPath}: mounted twice`);
    }
    const dir = path.resolve(mount.dir);
    const stat = await fs.promises.stat(dir).catch(() => undefined);
    if (!stat?.isDirectory()) {
      throw new IwrError("IO", `static server mount ${urlPath}: dir: expected an existing folder, got ${dir}`, { dir });
    }
    // Symbolic links are compared by their real location (see isInside below).
    resolved.push({ urlPath, dir: await fs.promises.realpath(dir) });
  }
  return resolved.sort((a, b) => b.urlPath.length - a.urlPath.length);
}

function isInside(folder: string, candidate: string): boolean {
  const relative = path.relative(folder, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * Decodes a request path and refuses anything suspicious before any mount is
 * consulted. Returns undefined for a path that must get 403.
 */
export function decodeRequestPath(rawPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  if (!decoded.startsWith("/") || decoded.includes("\0") || decoded.includes("\\")) return undefined;
  if (decoded.split("/").includes("..")) return undefined;
  return decoded;
}

type Lookup = { kind: "file"; file: string; size: number } | { kind: "redirect"; location: string } | { kind: "forbidden" } | { kind: "missing" };

async function lookUp(mounts: readonly Mount[], decodedPath: string, rawPath: string): Promise<Lookup> {
  const mount = mounts.find((candidate) => decodedPath.startsWith(candidate.urlPath));
  if (!mount) return { kind: "missing" };
  let file = path.resolve(mount.dir, `.${path.posix.normalize(`/${decodedPath.slice(mount.urlPath.length)}`)}`);
  if (!isInside(mount.dir, file)) return { kind: "forbidden" };
  let stat = await fs.promises.stat(file).catch(() => undefined);
  if (stat?.isDirectory()) {
    // A folder's relative links only resolve below it when its URL ends in "/".
    if (!rawPath.endsWith("/")) return { kind: "redirect", location: `${rawPath}/` };
    file = path.join(file, "index.html");
    stat = await fs.promises.stat(file).catch(() => undefined);
  }
  if (!stat?.isFile()) return { kind: "missing" };
  const real = await fs.promises.realpath(file).catch(() => undefined);
  if (!real || !isInside(mount.dir, real)) return { kind: "forbidden" };
  return { kind: "file", file: real, size: stat.size };
}

async function handle(mounts: readonly Mount[], req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    sendPlain(res, 405, "405 only GET and HEAD", { Allow: "GET, HEAD" });
    return;
  }
  const rawPath = (req.url ?? "/").split(/[?#]/)[0] ?? "/";
  const decodedPath = decodeRequestPath(rawPath);
  const found: Lookup = decodedPath === undefined ? { kind: "forbidden" } : await lookUp(mounts, decodedPath, rawPath);
  switch (found.kind) {
    case "file":
      sendFile(req, res, found.file, found.size);
      return;
    case "redirect":
      res.writeHead(301, { Location: found.location, "Cache-Control": "no-store" }).end();
      return;
    case "forbidden":
      sendPlain(res, 403, "403 outside the served folders");
      return;
    case "missing":
      sendPlain(res, 404, "404 not found");
      return;
  }
}

/** Serves one folder at "/", or several folders at URL prefixes, on 127.0.0.1 at a free port. */
export async function startStaticServer(source: string | { mounts: readonly Mount[] }): Promise<StaticServer> {
  const mounts = await resolveMounts(typeof source === "string" ? [{ urlPath: "/", dir: source }] : source.mounts);
  const server = http.createServer((req, res) => {
    handle(mounts, req, res).catch(() => {
      if (!res.headersSent) sendPlain(res, 500, "500 could not read the file");
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const rootMount = mounts.find((mount) => mount.urlPath === "/") ?? mounts[mounts.length - 1];
  return {
    origin,
    root: rootMount?.dir ?? "",
    mounts,
    url: (relativePath = "") => `${origin}/${relativePath.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/")}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
