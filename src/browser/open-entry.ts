/**
 * Opens a page's entry URL without `page.goto`.
 *
 * Why: goto answers with a Response handle. Playwright keeps at most 10,000 Request and
 * 10,000 Response handles per kind on a connection, and drops the oldest ones when
 * there are more. A page that floods requests makes that happen, and any page on the
 * shared browser can be hit, not only the flooding one. A command's reply that names
 * a dropped handle throws inside Playwright's message loop. Nothing can catch that
 * throw, so it ends the process. Events are safe: their handles are made as they are
 * sent. So the navigation starts through the DevTools protocol, whose answer is plain
 * data. The load wait uses the page's "load" event and the status comes from the
 * navigation's "response" event.
 */
import { type BrowserContext, errors, type Page, type Response } from "playwright";

export interface OpenedEntry {
  /** The HTTP status of the main document, when a response came (absent for a failed load). */
  status?: number;
}

/** A redirect on the way to the document (the static server sends 301 for a folder without its "/"). */
function isRedirect(response: Response): boolean {
  return response.status() >= 300 && response.status() < 400 && response.headers().location !== undefined;
}

/**
 * Navigates `page` to `url` and waits for its load event. Throws Playwright's
 * TimeoutError when no load event comes within `timeoutMs`. Throws a plain Error with
 * the browser's reason (net::ERR_…) when the navigation fails.
 */
export async function openEntry(context: BrowserContext, page: Page, url: string, timeoutMs: number): Promise<OpenedEntry> {
  const opened: OpenedEntry = {};
  const onResponse = (response: Response): void => {
    if (response.frame() !== page.mainFrame() || !response.request().isNavigationRequest() || isRedirect(response)) return;
    opened.status = response.status();
    // Listening keeps Playwright making a handle for every response of the page (a flood
    // while it loads included): the document's is the only one needed.
    page.off("response", onResponse);
  };
  page.on("response", onResponse);
  const deadline = Date.now() + timeoutMs;
  // Armed before the navigation starts, so a fast load is not missed; the blank page the
  // context opened with is not the entry.
  const loaded = page.waitForEvent("load", { predicate: () => page.url() !== "about:blank", timeout: timeoutMs });
  loaded.catch(() => undefined);
  const session = await context.newCDPSession(page);
  try {
    const started = await session.send("Page.navigate", { url }, { timeout: Math.max(1, deadline - Date.now()) });
    if (started.errorText) throw new Error(`${started.errorText} at ${url}`);
    await loaded;
    return opened;
  } catch (error) {
    if (error instanceof errors.TimeoutError) {
      throw new errors.TimeoutError(`no load event within ${timeoutMs} ms at ${url}`);
    }
    throw error;
  } finally {
    page.off("response", onResponse);
    // Not waited for: a renderer that hangs must not hold the caller.
    session.detach().catch(() => undefined);
  }
}
