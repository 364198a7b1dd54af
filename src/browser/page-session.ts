/**
 * One DevTools session per page, opened on first use and shared by whatever asks for it
 * (the console's command-line API, the stillness check's scaled screenshots); it ends
 * with the page. A page whose session cannot open (closed, crashed) gets undefined and
 * the caller takes its Playwright way instead.
 */
import type { CDPSession, Page } from "playwright";

const sessions = new WeakMap<Page, Promise<CDPSession | undefined>>();

export function pageSession(page: Page): Promise<CDPSession | undefined> {
  let session = sessions.get(page);
  if (!session) {
    session = page
      .context()
      .newCDPSession(page)
      .catch(() => undefined);
    sessions.set(page, session);
  }
  return session;
}
