/**
 * Lint of a candidate page, as the benchmark's output rules ask (docs/protocol.md §2):
 * asset links that answer 404, links that leave the page's own server (blocked in the
 * sandbox, so the page relied on the internet), `<img>` without width and height,
 * clickable elements without the `btn` class the judge's agent relies on, and script
 * errors while the page loaded. Read from the live page (after load) and from what the
 * host recorded; nothing here changes the page.
 */
import type { Page } from "playwright";
import type { PageIncident } from "../browser/host.ts";

export type LintKind = "missing-asset" | "off-origin" | "img-without-size" | "clickable-without-btn" | "script-error";

export interface LintFinding {
  kind: LintKind;
  detail: string;
}

export interface PageLintFacts {
  imagesWithoutSize: string[];
  clickablesWithoutBtn: string[];
  /** Visible clickables in all, for the share without `btn`. */
  clickables: number;
}

/** Runs in the page (self-contained): what the DOM says about the output rules. */
function readLintFactsInPage(): PageLintFacts {
  const describe = (element: Element): string => {
    const id = element.id ? `#${element.id}` : "";
    const text = (element.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 40);
    return `<${element.tagName.toLowerCase()}${id}>${text ? ` "${text}"` : ""}`;
  };
  const imagesWithoutSize = Array.from(document.querySelectorAll("img"))
    .filter((image) => !image.hasAttribute("width") || !image.hasAttribute("height"))
    .map((image) => `<img src="${(image.getAttribute("src") ?? "").slice(0, 80)}">`);
  const clickableSelector =
    "button, a[href], [onclick], [role=button], input[type=button], input[type=submit], input[type=checkbox], input[type=radio], summary, select";
  const visible = (element: Element): boolean => {
    const box = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    return box.width > 0 && box.height > 0 && style.visibility !== "hidden" && style.display !== "none";
  };
  const clickables = Array.from(document.querySelectorAll(clickableSelector)).filter(visible);
  const clickablesWithoutBtn = clickables.filter((element) => !element.classList.contains("btn") && !element.closest(".btn")).map(describe);
  return { imagesWithoutSize, clickablesWithoutBtn, clickables: clickables.length };
}

export async function readLintFacts(page: Page): Promise<PageLintFacts> {
  const source = `(() => { const __name = (f) => f; return (${readLintFactsInPage.toString()})(); })()`;
  return (await page.evaluate(source)) as PageLintFacts;
}

/** Off-origin URLs written in the page's source (http(s), protocol-relative, ws). */
export function offOriginUrls(html: string): string[] {
  const urls = html.match(/(?:https?:|wss?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'<>)]*/gi) ?? [];
  return [
    ...new Set(
      urls.filter(
        (url) => !/\/\/(?:127\.0\.0\.1|localhost)(?::\d+)?/i.test(url) && !/^\/\/www\.w3\.org\//i.test(url) && !/w3\.org\/(?:2000|1999)\//i.test(url),
      ),
    ),
  ];
}

/**
 * The page's lint findings. `loadedAtMs` is when the initial screenshot was taken on the
 * host's clock: script errors before it happened while the page loaded.
 */
export function lintFindings(options: { html: string; facts?: PageLintFacts; incidents: readonly PageIncident[]; loadedAtMs?: number }): LintFinding[] {
  const findings: LintFinding[] = [];
  for (const incident of options.incidents) {
    if (incident.kind === "http-error") findings.push({ kind: "missing-asset", detail: incident.detail });
    if (incident.kind === "blocked-request") findings.push({ kind: "off-origin", detail: `blocked: ${incident.detail}` });
    if (incident.kind === "page-error" && (options.loadedAtMs === undefined || incident.atMs <= options.loadedAtMs)) {
      findings.push({ kind: "script-error", detail: incident.detail });
    }
  }
  for (const url of offOriginUrls(options.html)) {
    if (!findings.some((finding) => finding.kind === "off-origin" && finding.detail.includes(url)))
      findings.push({ kind: "off-origin", detail: `in the source: ${url}` });
  }
  for (const image of options.facts?.imagesWithoutSize ?? []) findings.push({ kind: "img-without-size", detail: image });
  for (const clickable of options.facts?.clickablesWithoutBtn ?? []) findings.push({ kind: "clickable-without-btn", detail: clickable });
  return findings;
}
