/**
 * The task's `assets/`: the images and videos the page showed while it was recorded
 * (displayed-images.ts; the session passes the filter), in first-request order, de-duplicated by content, renamed to anonymous sequential names
 * that keep the extension (`001.png`, `002.jpg`, ...). Anonymous names stop a model
 * from reading meaning into file names; the URL → name map is kept for rewriting the
 * reference page.
 *
 * Bytes are fetched again after the recording rather than taken from the responses:
 * a video answered with a 206 range holds only part of the file.
 */
import fs from "node:fs";
import path from "node:path";
import type { APIRequestContext, Page, Response } from "playwright";
import { IwrError } from "../errors.ts";
import { sha256Hex } from "../files/content-hash.ts";

export interface RecordedAsset {
  /** Anonymous file name inside `assets/`, e.g. `001.png`. */
  readonly name: string;
  readonly file: string;
  /** Every URL (without fragment) that delivered these bytes. */
  readonly urls: readonly string[];
  readonly bytes: number;
}

const CONTENT_TYPE_EXTENSIONS: Record<string, string> = {
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "image/avif": ".avif",
  "image/svg+xml": ".svg",
  "image/x-icon": ".ico",
  "image/bmp": ".bmp",
  "video/mp4": ".mp4",
  "video/webm": ".webm",
  "video/ogg": ".ogv",
};

export function isMediaResponse(response: Response): boolean {
  const type = response.request().resourceType();
  if (type === "image" || type === "media") return true;
  const contentType = (response.headers()["content-type"] ?? "").toLowerCase();
  return contentType.startsWith("image/") || contentType.startsWith("video/");
}

/** A URL without its fragment: `a.png#x` and `a.png` are the same file. */
export function assetKey(url: string): string {
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href;
}

function extensionFor(url: string, contentType: string): string {
  const fromPath = path.posix.extname(new URL(url).pathname).toLowerCase();
  if (/^\.[a-z0-9]{1,5}$/.test(fromPath)) return fromPath;
  return CONTENT_TYPE_EXTENSIONS[contentType.split(";")[0]!.trim().toLowerCase()] ?? ".bin";
}

/**
 * Remembers the media URLs a page loaded, in the order it asked for them. Request order
 * follows the document (the parser and its preload scanner ask in source order), while
 * responses of parallel loads arrive in whatever order the machine's load allows: naming
 * by request order gives a recording the same asset names on every run.
 */
export class AssetCollector {
  private readonly order: string[] = [];
  /** Position of each URL's first request. */
  private readonly requested = new Map<string, number>();

  attach(page: Page): void {
    page.on("request", (request) => {
      const url = request.url();
      if (!/^https?:/.test(url)) return;
      const key = assetKey(url);
      if (!this.requested.has(key)) this.requested.set(key, this.requested.size);
    });
    page.on("response", (response) => {
      const url = response.url();
      if (!/^https?:/.test(url) || response.status() >= 400 || !isMediaResponse(response)) return;
      const key = assetKey(url);
      if (!this.order.includes(key)) this.order.push(key);
    });
  }

  /** Loaded URLs in first-request order. */
  get urls(): readonly string[] {
    const rank = (key: string) => this.requested.get(key) ?? Number.MAX_SAFE_INTEGER;
    return [...this.order].sort((a, b) => rank(a) - rank(b));
  }

  /**
   * Downloads every noted URL once more, writes the unique contents that `keep` accepts
   * (by URL or by the bytes' SHA-256) into `assetsDir` under sequential names, and
   * returns them in first-request order.
   */
  async save(request: APIRequestContext, assetsDir: string, keep: (url: string, sha256: string) => boolean = () => true): Promise<RecordedAsset[]> {
    fs.mkdirSync(assetsDir, { recursive: true });
    const byHash = new Map<string, { name: string; file: string; urls: string[]; bytes: number }>();
    const assets: { name: string; file: string; urls: string[]; bytes: number }[] = [];
    for (const url of this.urls) {
      const response = await request.get(url, { failOnStatusCode: false, timeout: 30_000 });
      const contentType = response.headers()["content-type"] ?? "";
      if (!response.ok()) throw new IwrError("RECORDER", `asset ${url} answered HTTP ${response.status()} when fetched for assets/`, { url });
      const body = await response.body();
      const hash = sha256Hex(body);
      if (!keep(url, hash)) continue;
      const known = byHash.get(hash);
      if (known) {
        known.urls.push(url);
        continue;
      }
      const name = `${String(assets.length + 1).padStart(3, "0")}${extensionFor(url, contentType)}`;
      const file = path.join(assetsDir, name);
      fs.writeFileSync(file, body);
      const asset = { name, file, urls: [url], bytes: body.length };
      byHash.set(hash, asset);
      assets.push(asset);
    }
    return assets;
  }
}

/** URL (without fragment) → anonymous asset name. */
export function assetNameByUrl(assets: readonly RecordedAsset[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const asset of assets) for (const url of asset.urls) map.set(url, asset.name);
  return map;
}
