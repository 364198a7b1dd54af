/**
 * Turning a model's reply into the page to save (docs/protocol.md §2, post-processing).
 * Pure functions: the graph's post-process node and any other generator share them.
 */
import path from "node:path";
import { IwrError } from "../errors.ts";
import { ASSET_PLACEHOLDER } from "../tasks/inputs.ts";

/** First ```html block; an unterminated one (a reply cut off at the token limit) runs to the end. */
const HTML_FENCE = /```[ \t]*html\b[^\n]*\n([\s\S]*?)(?:```|$)/i;
/** Fence lines left over anywhere in the text, e.g. a model nesting or repeating fences. */
const STRAY_FENCE_LINE = /^[ \t]*```[A-Za-z0-9_-]*[ \t]*$/gm;
const LOOKS_LIKE_HTML = /<(?:!doctype\s+html|html|head|body|div|main|section|style|script)\b/i;
const IFRAME_ELEMENT = /<iframe\b[\s\S]*?<\/iframe\s*>/gi;
const IFRAME_TAG = /<\/?iframe\b[^>]*>/gi;

/**
 * The relative path from the folder where index.html is written to the task's assets
 * folder, with "/" separators whatever the platform, as pages use it in URLs.
 */
export function assetsBasePath(outputDir: string, assetsDir: string): string {
  const relative = path.relative(path.resolve(outputDir), path.resolve(assetsDir));
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/**
 * The page inside a reply: the first fenced html block, else the raw reply when it looks
 * like HTML; iframes removed, stray fences stripped, the assets placeholder resolved.
 * Throws IwrError("MODEL_REPLY") when there is no HTML to take.
 */
export function extractPageFromReply(reply: string, assetsBase: string): string {
  const fenced = HTML_FENCE.exec(reply);
  let html: string;
  if (fenced) {
    html = fenced[1] ?? "";
  } else if (LOOKS_LIKE_HTML.test(reply)) {
    html = reply;
  } else {
    throw new IwrError("MODEL_REPLY", "reply contains no HTML (no ```html block and no HTML markup)", { replyChars: reply.length });
  }
  html = html.replace(IFRAME_ELEMENT, "").replace(IFRAME_TAG, "").replace(STRAY_FENCE_LINE, "").trim();
  if (!/<[A-Za-z!]/.test(html)) {
    throw new IwrError("MODEL_REPLY", "reply contains no HTML (the ```html block holds no markup)", { replyChars: reply.length });
  }
  return `${html.split(ASSET_PLACEHOLDER).join(assetsBase)}\n`;
}

/**
 * The harness's post-processing (core.py post_process), for the official profile: the
 * first ```html block only when a closing fence ends it (else the whole reply is kept),
 * every iframe removed, every leftover "```html" and "```" removed, the placeholder
 * resolved. It never refuses: an empty or prose reply becomes the page as it is.
 */
export function extractPageAsHarness(reply: string, assetsBase: string): string {
  if (!reply) return "";
  let code = reply.trim();
  const fenced = /```html\s*\n?([\s\S]*?)\n?```/i.exec(code);
  if (fenced) code = (fenced[1] ?? "").trim();
  code = code.replace(/<iframe[^>]*>[\s\S]*?<\/iframe>/gi, "").replace(/<iframe[^>]*\/?>/gi, "");
  // Python's str.replace: case-sensitive, every occurrence.
  code = code.split("```html").join("").split("```").join("");
  return code.split(ASSET_PLACEHOLDER).join(assetsBase);
}
