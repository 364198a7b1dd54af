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
import { ASSET_PLACEHOLDER } from "./schema.ts";
import { TASK_FILES } from "./layout.ts";

/** `src`/`href`/`poster`/`data` values of elements that load something, and `url(...)` in inline styles. */
const LOADING_ATTRIBUTE = /<(?:script|link|img|source|video|audio|iframe|embed|object|input|track)\b[^>]*?\s(?:src|href|poster|data)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi;
const LINK_REL = /\brel\s*=\s*(?:"([^"]*)"|'([^']*)')/i;
/**
 * Links that load nothing the page shows: navigation and metadata, and the icons a
 * headless browser never fetches (favicons, iOS home-screen icons and start images).
 */
const NON_LOADING_RELS = new Set([
  "canonical", "alternate", "author", "help", "license", "next", "prev", "search", "bookmark", "external", "nofollow", "noopener", "noreferrer", "manifest",
  "icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed", "apple-touch-startup-image", "mask-icon",
]);

function isLocalReference(value: string): boolean {
  const trimmed = value.trim();
  if (trimmed === "" || trimmed.startsWith("#")) return false;
  return !/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !trimmed.startsWith("//");
}

/** The local files the markup names, as paths relative to the page's folder (query and fragment removed). */
export function namedLocalFiles(html: string): string[] {
  const found = new Set<string>();
  // Markup inside inline scripts is a string the script builds ('<img src="' + name + '">'), not a file the page names.
  const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script>)/gi, "$1$2").replace(/<!--[\s\S]*?-->/g, "");
  for (const match of markup.matchAll(LOADING_ATTRIBUTE)) {
    const tag = match[0];
    if (/^<link\b/i.test(tag)) {
      const rel = LINK_REL.exec(tag);
      const rels = (rel?.[1] ?? rel?.[2] ?? "").toLowerCase().split(/\s+/).filter(Boolean);
      if (rels.length > 0 && rels.every((name) => NON_LOADING_RELS.has(name))) continue;
    }
    const value = match[1] ?? match[2] ?? "";
    if (!isLocalReference(value)) continue;
    const clean = value.trim().replace(/[?#].*$/, "");
    if (clean === "") continue;
    let decoded = clean;
    try {
      decoded = decodeURIComponent(clean);
    } catch {
      // Not decodable: checked as written.
    }
    found.add(decoded.replace(/^\.\//, ""));
  }
  return [...found];
}

/**
 * The files the site itself failed to serve while it was recorded, from the task's
 * recording.json: a reference cannot hold them, and the recording warned about each.
 */
async function filesFailedOnSite(taskDir: string): Promise<Set<string>> {
  try {
    const notes = JSON.parse(await fs.readFile(path.join(taskDir, TASK_FILES.recordingNotes), "utf8")) as { failedOnSite?: unknown };
    return new Set(Array.isArray(notes.failedOnSite) ? notes.failedOnSite.filter((entry): entry is string => typeof entry === "string") : []);
  } catch {
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
  const failedOnSite = await filesFailedOnSite(taskDir);
  const problems: string[] = [];
  for (const named of namedLocalFiles(html)) {
    if (failedOnSite.has(named.replace(/^\/+/, ""))) continue;
    const placeholder = named.startsWith(`${ASSET_PLACEHOLDER}/`);
    const base = placeholder ? assetsDir : referenceDir;
    const relative = placeholder ? named.slice(ASSET_PLACEHOLDER.length + 1) : named.replace(/^\/+/, "");
    const target = path.resolve(base, relative);
    if (path.relative(base, target).startsWith("..")) {
      problems.push(`${page}: names ${named}, outside ${placeholder ? "assets/" : "reference/"}: it cannot be served`);
      continue;
    }
    const exists = await fs.stat(target).then((stat) => stat.isFile(), () => false);
    if (!exists) problems.push(`${page}: names ${named}, which is not in ${placeholder ? "assets/" : "reference/"} (record the task again: the reference page keeps the site's files beside it)`);
  }
  return problems;
}
