/**
 * Running page scripts through the page's DevTools session (Runtime.evaluate without a
 * context id runs in the main frame's own JavaScript world, the one page.evaluate uses).
 *
 * Two reasons to go this way rather than Playwright's. With the DevTools console's
 * command-line API (`getEventListeners` and friends) a script sees listeners added with
 * addEventListener, which no page script can. And a call through the session leaves
 * nothing in the page's Playwright trace: each page.evaluate there is an entry with a DOM
 * snapshot before and after it, and our own readings (the at-rest wait's, every poll) made
 * three quarters of a replay's snapshots and buried its few actions in the trace viewer.
 *
 * Values come back as JSON (returnByValue): a NaN, an infinity or an undefined inside an
 * object or array comes back as null or is left out, so page scripts return plain data.
 */
import type { CDPSession, Page } from "playwright";
import { IwrError } from "../errors.ts";
import { pageSession } from "./page-session.ts";

/** A value Runtime.evaluate could not put in JSON, at the top level (NaN, the infinities, -0). */
function unserializable(text: string): unknown {
  if (text === "NaN") return Number.NaN;
  if (text === "Infinity") return Number.POSITIVE_INFINITY;
  if (text === "-Infinity") return Number.NEGATIVE_INFINITY;
  if (text === "-0") return -0;
  if (text.endsWith("n")) return BigInt(text.slice(0, -1));
  return undefined;
}

/** The script's value; its own exception is an error. A failure of the session itself rejects as the session's error. */
async function evaluateInSession(session: CDPSession, expression: string, commandLineApi: boolean): Promise<unknown> {
  const reply = await session.send("Runtime.evaluate", { expression, includeCommandLineAPI: commandLineApi, returnByValue: true, awaitPromise: true });
  if (reply.exceptionDetails) {
    const detail = reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text;
    throw new IwrError("BROWSER", `a page script failed in the page: ${detail}`);
  }
  return reply.result.unserializableValue !== undefined ? unserializable(reply.result.unserializableValue) : reply.result.value;
}

/**
 * Evaluates `expression` in the page with the command-line API and returns its value,
 * or undefined when DevTools is out of reach (the caller then runs the script the
 * ordinary way). An exception thrown by the script is an error.
 */
export async function evaluateWithDevtools(page: Page, expression: string): Promise<{ value: unknown } | undefined> {
  const session = await pageSession(page);
  if (!session) return undefined;
  return { value: await evaluateInSession(session, expression, true) };
}

/**
 * Evaluates `expression` in the page, outside its Playwright trace. Where the session
 * cannot run it (none opened; between two documents, when the page has no default context
 * yet) it runs the Playwright way, which waits for the document and reports a closed or
 * crashed page as it always does. An exception thrown by the script is an error.
 */
export async function evaluateUntraced(page: Page, expression: string): Promise<unknown> {
  const session = await pageSession(page);
  if (session) {
    try {
      return await evaluateInSession(session, expression, false);
    } catch (error) {
      if (error instanceof IwrError) throw error; // the script's own exception
    }
  }
  return page.evaluate(expression);
}
