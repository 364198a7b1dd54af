/**
 * Which images a page shows: the benchmark's assets are the images a person saw in the
 * recording, not every file the page happened to fetch (a favicon, an apple-touch icon,
 * a preloaded sprite never drawn). The recorder samples the screen's images at every
 * state it records; an image counts as shown once it was on screen, visible, in one of
 * them.
 *
 * "On screen" means an element whose box intersects the viewport, with
 * `checkVisibility` (display, visibility and opacity of the element and its ancestors)
 * true, showing the image as <img>/<picture>/<input type=image> content, a <video> or
 * its poster, an SVG <image>, or a CSS image of the element or its ::before/::after
 * (background, list-style, border-image, mask, content: url()).
 */
import type { Page } from "playwright";
import { evaluateInPage } from "../browser/page-scripts.ts";
import { assetKey } from "./assets.ts";

/** Runs in the page: the absolute URLs of the images shown in the viewport now (blob: ones included, data: ones not). */
function imagesOnScreen(_: null): string[] {
  const found = new Set<string>();
  const width = window.innerWidth;
  const height = window.innerHeight;
  const add = (url: string | null | undefined): void => {
    if (!url || url.startsWith("data:")) return;
    try {
      found.add(url.startsWith("blob:") ? url : new URL(url, document.baseURI).href);
    } catch {
      // Not a URL: nothing shown.
    }
  };
  const cssUrls = (value: string): void => {
    for (const match of value.matchAll(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)/g)) add(match[1] ?? match[2] ?? match[3]);
  };
  const onScreen = (element: Element): boolean => {
    const rect = element.getBoundingClientRect();
    if (rect.width < 1 || rect.height < 1) return false;
    if (rect.right <= 0 || rect.bottom <= 0 || rect.left >= width || rect.top >= height) return false;
    return element.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  };
  const visit = (root: Document | ShadowRoot): void => {
    for (const element of Array.from(root.querySelectorAll("*"))) {
      if (element.shadowRoot) visit(element.shadowRoot);
      if (!onScreen(element)) continue;
      // An image that failed (a 404, a refused host) shows its alt text or nothing: not an image shown.
      if (element instanceof HTMLImageElement) {
        if (element.complete && element.naturalWidth > 0) add(element.currentSrc || element.src);
      } else if (element instanceof HTMLInputElement && element.type === "image") add(element.src);
      else if (element instanceof HTMLVideoElement) {
        add(element.currentSrc || element.src);
        add(element.poster);
      } else if (element instanceof SVGImageElement) add(element.href.baseVal);
      for (const pseudo of [null, "::before", "::after"]) {
        const style = getComputedStyle(element, pseudo);
        for (const value of [style.backgroundImage, style.listStyleImage, style.borderImageSource, style.maskImage, style.content]) {
          if (value && value !== "none" && value.includes("url(")) cssUrls(value);
        }
      }
    }
  };
  visit(document);
  return [...found];
}

/** Runs in the page: the SHA-256 (hex) of a blob: URL's bytes, or null when it is gone. */
async function blobDigest(url: string): Promise<string | null> {
  try {
    const bytes = await (await fetch(url)).arrayBuffer();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
  } catch {
    return null;
  }
}

/**
 * The images shown across every sampled state of one recording. An image shown through
 * a blob: URL (a page that fetches its pictures and shows them with createObjectURL) is
 * known by its bytes' digest, since the blob URL names no file: the file the page
 * fetched with those bytes is the one it showed.
 */
export class DisplayedImages {
  /** `siteOrigin`: only the site's own images (and blob: ones) count; anything else was refused while recording. */
  constructor(private readonly siteOrigin: string) {}

  private readonly shown = new Set<string>();
  private readonly shownContent = new Set<string>();
  private readonly digestedBlobs = new Set<string>();

  /** Samples the page's current screen; a page that cannot answer (navigating, closed) adds nothing. */
  async sample(page: Page): Promise<void> {
    const urls = await evaluateInPage(page, imagesOnScreen, null).catch(() => [] as string[]);
    for (const url of urls) {
      if (/^https?:/.test(url)) {
        if (new URL(url).origin === this.siteOrigin) this.shown.add(assetKey(url));
      } else if (url.startsWith("blob:") && !this.digestedBlobs.has(url)) {
        this.digestedBlobs.add(url);
        const digest = await evaluateInPage(page, blobDigest, url).catch(() => null);
        if (digest) this.shownContent.add(digest);
      }
    }
  }

  /** Whether the file at `url`, whose bytes have this SHA-256, was on screen. */
  has(url: string, sha256?: string): boolean {
    return this.shown.has(assetKey(url)) || (sha256 !== undefined && this.shownContent.has(sha256));
  }

  get count(): number {
    return this.shown.size + this.shownContent.size;
  }
}
