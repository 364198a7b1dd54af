/**
 * Complete capture: every file the site served while it was recorded — stylesheets,
 * scripts, web fonts, images set from CSS or built in script, data and HTML fragments
 * fetched by script — kept at its own path beside the reference page, so the reference
 * renders exactly as the site did, whatever the site is made of (README "Reference
 * pages").
 *
 * Only the site's own origin is kept: the recording may not reach anything else (the
 * recorder blocks it), so nothing else can be part of the page. A same-origin request
 * that fails while recording is a warning naming its URL; a file the site served that
 * cannot be kept (two different files at one path, a name the results folder reserves)
 * is an error, since the reference would then miss it.
 */
import fs from "node:fs";
import path from "node:path";
import type { APIRequestContext, Page } from "playwright";
import { IwrError } from "../errors.ts";
import { RECORD_ENTRIES } from "../results/layout.ts";
import { assetKey } from "./assets.ts";

/** The kind of a media file kept because the source names it, though the recording never loaded it. */
const NAMED_IN_SOURCE = "named-in-source";

/** One file of the snapshot, as recording.json lists it. */
export interface CapturedFile {
  /** Path inside `reference/`, with `/` separators. */
  readonly path: string;
  readonly url: string;
  /** Playwright's resource type of the first request (stylesheet, script, font, image, fetch, ...), or "named-in-source". */
  readonly kind: string;
  readonly bytes: number;
}

/** The path a same-origin URL's file takes inside the snapshot: its URL path, a folder's index.html for a folder URL. */
export function snapshotPath(url: string): string {
  const raw = new URL(url).pathname;
  let pathname = raw;
  try {
    pathname = decodeURIComponent(raw);
  } catch {
    // A malformed escape: the server looks the path up as written, and so does the snapshot.
  }
  // Repeated slashes name the same file to the static server: they do here too.
  const relative = pathname.replace(/\/{2,}/g, "/").replace(/^\/+/, "");
  return relative === "" || relative.endsWith("/") ? `${relative}index.html` : relative;
}

/** A URL as recording.json and warnings show it: no query string (it may carry a token), no credentials. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

function describeFailure(status: number | undefined, reason: string | undefined): string {
  return status !== undefined ? `HTTP ${status}` : (reason ?? "failed");
}

/** Watches a page's requests to its own origin: what loaded (in first-request order) and what failed. */
export class SiteCapture {
  private readonly loaded = new Map<string, string>();
  private readonly failed = new Map<string, string>();

  constructor(private readonly origin: string) {}

  attach(page: Page): void {
    page.on("response", (response) => {
      const url = response.url();
      if (!this.ownOrigin(url)) return;
      // What the snapshot keeps is what a GET returns; a form post's answer is not a file of the site.
      if (response.request().method() !== "GET") return;
      const key = assetKey(url);
      if (response.status() >= 400) {
        this.failed.set(key, describeFailure(response.status(), undefined));
        return;
      }
      // A redirect's file is its target's; 304 and 206 are re-fetched whole when saved.
      if (response.status() >= 300 && response.status() < 400 && response.status() !== 304) return;
      const kind = response.request().resourceType();
      if (!this.loaded.has(key)) this.loaded.set(key, kind);
      // A redirected request's own path must answer in the reference too: it gets the target's bytes.
      for (let earlier = response.request().redirectedFrom(); earlier; earlier = earlier.redirectedFrom()) {
        const from = assetKey(earlier.url());
        if (this.ownOrigin(from) && !this.loaded.has(from)) this.loaded.set(from, kind);
      }
    });
    page.on("requestfailed", (request) => {
      const url = request.url();
      if (!this.ownOrigin(url)) return;
      const reason = request.failure()?.errorText;
      // A media request cut short by the page itself (a video seeking, a navigation) is not a missing file.
      if (reason === "net::ERR_ABORTED") return;
      this.failed.set(assetKey(url), describeFailure(undefined, reason));
    });
  }

  private ownOrigin(url: string): boolean {
    return /^https?:/.test(url) && new URL(url).origin === this.origin;
  }

  /** Every same-origin file that failed and never loaded: its snapshot path, URL and why. */
  failedFiles(): Array<{ path: string; url: string; why: string }> {
    return [...this.failed].filter(([url]) => !this.loaded.has(url)).map(([url, why]) => ({ path: snapshotPath(url), url, why }));
  }

  /** "the site failed to load <url> (HTTP 404)" for every same-origin file that never loaded. */
  failures(): string[] {
    return this.failedFiles().map(({ url, why }) => `the site failed to load ${shownUrl(url)} (${why})`);
  }

  /** The URLs that loaded, in first-request order. */
  get urls(): readonly string[] {
    return [...this.loaded.keys()];
  }

  /**
   * Writes every loaded file but the entry document into `referenceDir` at its
   * snapshot path, then each of `namedMedia` (media URLs the page's source names but the
   * recording never reached) that the site serves as an image or video, so the
   * reference also holds the states the recording did not visit. Throws when the
   * reference could not hold a file the site served.
   */
  async save(request: APIRequestContext, referenceDir: string, entryUrl: string, namedMedia: readonly string[] = []): Promise<CapturedFile[]> {
    const entryKey = assetKey(entryUrl);
    const byPath = new Map<string, { url: string; body: Buffer }>();
    const files: CapturedFile[] = [];
    const wanted: Array<[string, string]> = [
      ...this.loaded,
      ...namedMedia.filter((url) => this.ownOrigin(url) && !this.loaded.has(assetKey(url))).map((url): [string, string] => [assetKey(url), NAMED_IN_SOURCE]),
    ];
    for (const [url, kind] of wanted) {
      if (url === entryKey || snapshotPath(url) === snapshotPath(entryUrl)) continue;
      const file = snapshotPath(url);
      if (file.split("/").some((part) => part === ".." || part === "")) {
        throw new IwrError("RECORDER", `the site serves ${url}, whose path cannot be kept inside the reference folder`, { url });
      }
      const top = file.split("/")[0]!;
      if (RECORD_ENTRIES.has(top) || top.startsWith(".")) {
        throw new IwrError(
          "RECORDER",
          `the site serves ${url}, whose path '${file}' the results folder reserves (or hides); the reference page could not load it: rename it on the site`,
          { url },
        );
      }
      const response = await request.get(url, { failOnStatusCode: false, timeout: 30_000 });
      // A name in the source that is not a media file on the site (a string that only looks like one) is nothing to keep.
      if (kind === NAMED_IN_SOURCE && (!response.ok() || !/^(image|video)\//i.test(response.headers()["content-type"] ?? ""))) continue;
      if (!response.ok())
        throw new IwrError("RECORDER", `${url} loaded while recording but answered HTTP ${response.status()} when saved for the reference page`, { url });
      const body = await response.body();
      const earlier = byPath.get(file);
      if (earlier) {
        if (earlier.body.equals(body)) continue;
        throw new IwrError(
          "RECORDER",
          `the site served two different files at one path, ${earlier.url} and ${url} (they differ only in the query string), ` +
            "and the reference page can keep one: serve them at different paths",
          { urls: [earlier.url, url] },
        );
      }
      byPath.set(file, { url, body });
      const target = path.join(referenceDir, ...file.split("/"));
      try {
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.writeFileSync(target, body);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "EISDIR" && code !== "ENOTDIR" && code !== "EEXIST") throw error;
        throw new IwrError(
          "RECORDER",
          `the site serves ${shownUrl(url)} at a path that is also a folder of other files it serves ('${file}'); ` +
            "a folder of files cannot hold both: serve one of them elsewhere",
          { url: shownUrl(url) },
        );
      }
      files.push({ path: file, url, kind, bytes: body.length });
    }
    return files;
  }
}
