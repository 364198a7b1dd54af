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
import type { CDPSession, Frame, Page } from "playwright";
import { IwrError } from "../errors.ts";
import { pageSession } from "./page-session.ts";

/** The page's own exception, thrown by one of our scripts (a plain Error, as page.evaluate's is: not a failure of the browser). */
export class PageScriptError extends Error {
  override name = "PageScriptError";
}

/** A value Runtime.evaluate could not put in JSON, at the top level (NaN, the infinities, -0, a BigInt). */
function unserializable(text: string): unknown {
  if (text === "NaN") return Number.NaN;
  if (text === "Infinity") return Number.POSITIVE_INFINITY;
  if (text === "-Infinity") return Number.NEGATIVE_INFINITY;
  if (text === "-0") return -0;
  if (text.endsWith("n")) return BigInt(text.slice(0, -1));
  return undefined;
}

interface SessionCall {
  commandLineApi: boolean;
  /** As page.evaluate does (Runtime.callFunctionOn with userGesture): the page gets the activation it always got from our scripts. */
  userGesture: boolean;
}

/** The script's value; its own exception is a PageScriptError. A failure of the session itself rejects with the session's error. */
async function evaluateInSession(session: CDPSession, expression: string, call: SessionCall): Promise<unknown> {
  const reply = await session.send("Runtime.evaluate", {
    expression,
    includeCommandLineAPI: call.commandLineApi,
    userGesture: call.userGesture,
    returnByValue: true,
    awaitPromise: true,
  });
  if (reply.exceptionDetails) {
    const { exception, text } = reply.exceptionDetails;
    // A promise rejected with a plain value has no description: its value says what it was.
    const detail = exception?.description ?? (exception?.value !== undefined ? `${text} ${JSON.stringify(exception.value)}` : text);
    throw new PageScriptError(`a page script failed in the page: ${detail}`);
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
  try {
    return { value: await evaluateInSession(session, expression, { commandLineApi: true, userGesture: false }) };
  } catch (error) {
    if (error instanceof PageScriptError) throw new IwrError("BROWSER", error.message);
    throw error;
  }
}

/**
 * Session failures after which the script has not run, so the Playwright way may run it:
 * the page between two documents (no default context yet; Playwright waits for the next),
 * or the session gone with its page (Playwright then reports the page closed or crashed).
 * Any other failure is thrown as it is: the script may have run, and must not run twice.
 */
const NOT_RUN = /Cannot find default execution context|Target page, context or browser has been closed|Session closed|detached/i;

/**
 * Evaluates `expression` in the page, outside its Playwright trace. Where the session
 * cannot run it (see NOT_RUN, or none opened) it runs the Playwright way, which waits for
 * the next document, and reports a closed or crashed page as it always did (a renderer
 * that crashes while a script runs fails the session's command at once too). An exception
 * thrown by the script is a PageScriptError.
 */
export async function evaluateUntraced(page: Page, expression: string): Promise<unknown> {
  const session = await pageSession(page);
  if (session && !page.isClosed()) {
    try {
      return await evaluateInSession(session, expression, { commandLineApi: false, userGesture: true });
    } catch (error) {
      if (error instanceof PageScriptError || !NOT_RUN.test(String(error))) throw error;
    }
  }
  return page.evaluate(expression);
}

/**
 * Runs `script(arg)` in a frame: the main frame's outside the page's trace (evaluateUntraced);
 * a child frame's the Playwright way, for Runtime.evaluate without a context id reaches only
 * the main frame's world. `script` travels as its source text (no inner named functions).
 */
export async function evaluateInFrame<R>(frame: Frame, script: (arg: string) => R, arg: string): Promise<R> {
  const page = frame.page();
  if (frame !== page.mainFrame()) return frame.evaluate(script, arg);
  return (await evaluateUntraced(page, `(${script.toString()})(${JSON.stringify(arg)})`)) as R;
}
