/**
 * A recorded task's reference page (`reference/index.html`) must find every local file
 * its markup names: stylesheets, scripts, images, fonts preloaded, frames. It is served
 * at "/" from its own folder like a candidate, so a named file missing from
 * `reference/` is a 404 when it is scored — and a reference that lost its stylesheet
 * scores below a blank page. Links to the assets placeholder must name a file of
 * `assets/`. Only what the markup names literally is checked here; what scripts fetch
 * is checked by the recorder, which loads the reference once before installing a task.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { ASSET_PLACEHOLDER } from "./inputs.ts";
import { TASK_FILES } from "./layout.ts";

/** `src`/`href`/`poster`/`data` values (quoted or not) of elements that load something. */
const LOADING_ATTRIBUTE =
  /<(script|link|img|source|video|audio|embed|object|input|track)\b[^>]*?\s(src|href|poster|data)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;
const LINK_REL = /\brel\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;
const BASE_HREF = /<base\b[^>]*?\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;
/** Which attribute loads something on which element (an input's `data` or an object's `src` loads nothing). */
const LOADING_PAIRS = new Set([
  "script:src",
  "link:href",
  "img:src",
  "source:src",
  "video:src",
  "video:poster",
  "audio:src",
  "embed:src",
  "object:data",
  "input:src",
  "track:src",
]);
/**
 * Links that load nothing the page shows: navigation and metadata, and the icons a
 * headless browser never fetches (favicons, iOS home-screen icons and start images).
 */
const NON_LOADING_RELS = new Set([
  "canonical",
  "alternate",
  "author",
  "help",
  "license",
  "next",
  "prev",
  "search",
  "bookmark",
  "external",
  "nofollow",
  "noopener",
  "noreferrer",
  "manifest",
  "icon",
  "shortcut",
  "apple-touch-icon",
  "apple-touch-icon-precomposed",
  "apple-touch-startup-image",
  "mask-icon",
]);
/** Where the reference is served, for resolving names as the browser does. */
const SERVED_AT = "http://reference.invalid/";

/**
 * Content that is never part of the loaded page: inline scripts (markup in them is a
 * string the script builds), templates (inert until cloned), noscript (scripts run),
 * iframes (candidate post-processing removes them), comments.
 */
function loadedMarkup(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/(<(script|template|noscript)\b[^>]*>)[\s\S]*?(<\/\2>)/gi, "$1$3")
    .replace(/<iframe\b[\s\S]*?(<\/iframe>|>)/gi, "");
}

/** The local files the markup loads, as paths from the reference folder's root (resolved against <base>, query and fragment removed). */
export function namedLocalFiles(html: string): string[] {
  const found = new Set<string>();
  const markup = loadedMarkup(html);
  const baseMatch = BASE_HREF.exec(markup);
  let base = new URL(SERVED_AT);
  try {
    if (baseMatch) base = new URL(baseMatch[1] ?? baseMatch[2] ?? baseMatch[3] ?? "", SERVED_AT);
  } catch {
    // An unusable <base>: the browser ignores it too.
  }
  for (const match of markup.matchAll(LOADING_ATTRIBUTE)) {
    const tag = match[0];
    if (!LOADING_PAIRS.has(`${match[1]!.toLowerCase()}:${match[2]!.toLowerCase()}`)) continue;
    if (/^<link\b/i.test(tag)) {
      const rel = LINK_REL.exec(tag);
      const rels = (rel?.[1] ?? rel?.[2] ?? rel?.[3] ?? "").toLowerCase().split(/\s+/).filter(Boolean);
      if (rels.length > 0 && rels.every((name) => NON_LOADING_RELS.has(name))) continue;
    }
    const value = (match[3] ?? match[4] ?? match[5] ?? "").trim();
    if (value === "" || value.startsWith("#") || /^(data|blob|javascript|about|mailto):/i.test(value)) continue;
    let resolved: URL;
    try {
      resolved = new URL(value, base);
    } catch {
      continue;
    }
    if (resolved.origin !== new URL(SERVED_AT).origin) continue;
    let file = resolved.pathname;
    try {
      file = decodeURIComponent(file);
    } catch {
      // Not decodable: checked as written.
    }
    file = file.replace(/^\/+/, "");
    if (file !== "") found.add(file);
  }
  return [...found];
}

/**
 * What the recorder's notes (recording.json) excuse: the files the site itself failed to
 * serve, and media the source names that the recording never loaded (a lazy image below
 * the fold, an unreached state) — the reference cannot hold what the site never gave.
 */
async function excusedByNotes(taskDir: string): Promise<Set<string>> {
  try {
    const notes = JSON.parse(await fs.readFile(path.join(taskDir, TASK_FILES.recordingNotes), "utf8")) as { failedOnSite?: unknown; namedNotLoaded?: unknown };
    const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string") : []);
    return new Set([...strings(notes.failedOnSite), ...strings(notes.namedNotLoaded).map((name) => name.replace(/^\.?\/+/, "").replace(/[?#].*$/, ""))]);
  } catch {
    // No notes (a task not recorded here) or unreadable ones: nothing is excused.
    return new Set();
  }
}

/** Problems: each local file the reference page names that its folder (or assets/) does not hold. */
export async function missingReferenceFiles(taskDir: string, assetsDir: string): Promise<string[]> {
  const referenceDir = path.join(taskDir, TASK_FILES.referenceDir);
  const page = path.join(referenceDir, "index.html");
  let html: string;
  try {
    html = await fs.readFile(page, "utf8");
  } catch {
    return [];
  }
  const excused = await excusedByNotes(taskDir);
  const problems: string[] = [];
  for (const named of namedLocalFiles(html)) {
    if (excused.has(named)) continue;
    const placeholder = named.startsWith(`${ASSET_PLACEHOLDER}/`);
    const base = placeholder ? assetsDir : referenceDir;
    const target = path.resolve(base, placeholder ? named.slice(ASSET_PLACEHOLDER.length + 1) : named);
    if (path.relative(base, target).startsWith("..")) {
      problems.push(`${page}: names ${named}, outside ${placeholder ? "assets/" : "reference/"}: it cannot be served`);
      continue;
    }
    const exists = await fs.stat(target).then(
      (stat) => stat.isFile(),
      () => false,
    );
    if (!exists)
      problems.push(
        `${page}: names ${named}, which is not in ${placeholder ? "assets/" : "reference/"} ` +
          "(record the task again: the reference page keeps the site's files beside it)",
      );
  }
  return problems;
}
