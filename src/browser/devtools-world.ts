/**
 * Running a page script with the DevTools console's command-line API (`getEventListeners`
 * and friends), through a DevTools session: Runtime.evaluate without a context id runs in
 * the main frame's own JavaScript world, where the page's `onclick` properties and
 * listeners live (Playwright's utility world sees the same DOM but not those).
 */
import type { Page } from "playwright";
import { IwrError } from "../errors.ts";
import { pageSession } from "./page-session.ts";

/**
 * Evaluates `expression` in the page with the command-line API and returns its value
 * (returnByValue), or undefined when DevTools is out of reach (the caller then runs the
 * script the ordinary way). An exception thrown by the script is an error.
 */
export async function evaluateWithDevtools(page: Page, expression: string): Promise<{ value: unknown } | undefined> {
  const session = await pageSession(page);
  if (!session) return undefined;
  const reply = await session.send("Runtime.evaluate", { expression, includeCommandLineAPI: true, returnByValue: true });
  if (reply.exceptionDetails) {
    const detail = reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text;
    throw new IwrError("BROWSER", `a page script failed in the page: ${detail}`);
  }
  return { value: reply.result.value };
}
