/**
 * Running our functions inside the page. A function travels to the page as its source
 * text; a transpiler that keeps function names (tsx does) wraps inner functions in a
 * `__name` helper that does not exist there, so each page script is wrapped in one that
 * defines a no-op `__name`, with the shared page helpers (in-page-helpers.ts and
 * element-facts.ts) before it.
 */
import type { Page } from "playwright";
import { evaluateUntraced } from "./devtools-world.ts";
import { ELEMENT_FACTS_SOURCE } from "./element-facts.ts";
import { IN_PAGE_HELPERS } from "./in-page-helpers.ts";

const PRELUDE = `const __name = (f) => f; ${IN_PAGE_HELPERS}\n${ELEMENT_FACTS_SOURCE}\n`;

/** The expression that runs `fn(arg)` in the page (for page.evaluate, or DevTools' Runtime.evaluate). */
export function pageScriptSource<A, R>(fn: (arg: A) => R, arg: A): string {
  return `(() => { ${PRELUDE}return (${fn.toString()})(${JSON.stringify(arg)}); })()`;
}

/** Runs `fn(arg)` in the page's main world and returns its result (plain data), leaving nothing in the page's trace (devtools-world.ts). */
export async function evaluateInPage<A, R>(page: Page, fn: (arg: A) => R, arg: A): Promise<R> {
  return (await evaluateUntraced(page, pageScriptSource(fn, arg))) as R;
}

/** `fn` rebuilt with the prelude, for Playwright's own evaluate on an element (which sends it as source). */
export function pageFunction<A, R>(fn: (element: Element, arg: A) => R): (element: Element, arg: unknown) => R {
  return new Function("element", "arg", `${PRELUDE}return (${fn.toString()})(element, arg);`) as (element: Element, arg: unknown) => R;
}
