/**
 * The reference page (`reference/index.html`): the site's own index.html source with
 * every asset URL pointing at `__PLACEHOLDER_ASSETS_BASE_DIR__/<anonymous name>`, so
 * the true page can be scored exactly like a generated candidate (the calibration
 * ceiling). The source is rewritten, not the live DOM: the DOM after the recording is
 * a later state, and scripts must start from the first one.
 *
 * Each asset URL is matched in the text in the forms an author writes it (relative to
 * the page, `./`-prefixed, root-absolute, full URL, percent-decoded), only where it
 * stands as a whole token (after a quote, `(`, `=`, `,` or space), so `img/a.png` never
 * rewrites the tail of `other/img/a.png`.
 */
import path from "node:path";
import escapeRegExp from "escape-string-regexp";
import { ASSET_PLACEHOLDER } from "../tasks/inputs.ts";

const MEDIA_EXTENSIONS = "png|jpe?g|gif|webp|svg|avif|ico|bmp|mp4|webm|ogv";

/** Things in a source that look like a relative or same-site media file reference. */
const MEDIA_REFERENCE = new RegExp(
  `(?<=^|["'(\\s=,\`])((?:\\.{0,2}/)?[^\\s"'(),<>=\`]+?\\.(?:${MEDIA_EXTENSIONS})(?:\\?[^\\s"'()<>\`#]*)?)(?=$|["')\\s,#\`])`,
  "gim",
);

/** The spellings of `assetUrl` that may appear in a page served at `pageUrl`. */
export function urlSpellings(assetUrl: string, pageUrl: string): string[] {
  const asset = new URL(assetUrl);
  const page = new URL(pageUrl);
  const withQuery = asset.pathname + asset.search;
  const spellings = new Set<string>([asset.href]);
  if (asset.origin === page.origin) {
    const pageDir = page.pathname.endsWith("/") ? page.pathname : path.posix.dirname(page.pathname) + "/";
    const relative = path.posix.relative(pageDir, asset.pathname) + asset.search;
    spellings.add(withQuery);
    spellings.add(relative);
    if (!relative.startsWith("../")) spellings.add(`./${relative}`);
    spellings.add(`//${asset.host}${withQuery}`);
  }
  for (const spelling of [...spellings]) {
    try {
      spellings.add(decodeURI(spelling));
    } catch {
      // Not decodable: the encoded spelling is all there is.
    }
  }
  return [...spellings].filter((spelling) => spelling.length > 0).sort((a, b) => b.length - a.length);
}

export interface RewrittenPage {
  readonly html: string;
  /** How many references were rewritten. */
  readonly replaced: number;
  /** Media-looking references left as they were (not loaded, so not an asset). */
  readonly leftovers: string[];
}

/** Rewrites every spelling of every asset URL into the placeholder form. */
export function rewriteAssetUrls(html: string, pageUrl: string, nameByUrl: ReadonlyMap<string, string>): RewrittenPage {
  let output = html;
  let replaced = 0;
  const replacements = [...nameByUrl].flatMap(([url, name]) => urlSpellings(url, pageUrl).map((spelling) => ({ url, spelling, name })));
  // Longest first, so a full URL is rewritten before the shorter path inside it could be.
  replacements.sort((a, b) => b.spelling.length - a.spelling.length);
  for (const { spelling, name } of replacements) {
    const pattern = new RegExp(`(?<=^|["'(\\s=,\`])${escapeRegExp(spelling)}(?=$|["')\\s,#\`])`, "gm");
    output = output.replace(pattern, () => {
      replaced += 1;
      return `${ASSET_PLACEHOLDER}/${name}`;
    });
  }
  const leftovers = findMediaReferences(output).filter((reference) => !reference.startsWith(`${ASSET_PLACEHOLDER}/`));
  return { html: output, replaced, leftovers };
}

/** Every media-looking reference in a source, in order of appearance, without duplicates. */
export function findMediaReferences(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(MEDIA_REFERENCE)) {
    const reference = match[1]!;
    if (/^(data|blob|javascript):/i.test(reference)) continue;
    if (!found.includes(reference)) found.push(reference);
  }
  return found;
}

/** The absolute URLs of the media references in a page's source that stay on the page's origin. */
export function sameOriginMediaUrls(source: string, pageUrl: string): string[] {
  const origin = new URL(pageUrl).origin;
  const urls: string[] = [];
  for (const reference of findMediaReferences(source)) {
    if (reference.startsWith(`${ASSET_PLACEHOLDER}/`)) continue;
    let resolved: URL;
    try {
      resolved = new URL(reference, pageUrl);
    } catch {
      continue;
    }
    resolved.hash = "";
    if (resolved.origin === origin && !urls.includes(resolved.href)) urls.push(resolved.href);
  }
  return urls;
}
