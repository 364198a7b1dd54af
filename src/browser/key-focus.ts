/**
 * Where keyboard focus is when a key is pressed, and giving it back on replay (issue #30).
 *
 * A key press goes to whatever has the focus: an element (a text field, a canvas with a
 * tabindex), the document itself (its body, when no element has focus; a game listening
 * on `window` hears it there), or a child frame. The recorder notes which, right before
 * it presses; the replay looks before its own press and, when the page's focus is not
 * where the recording had it, gives it back the same way:
 *
 * - the page itself has no focus (`document.hasFocus()` is false: a headless browser may
 *   have no focused frame) → the page is brought to the front and its window focused;
 * - the recording had the focus on the page and it now sits in a child frame → the frame
 *   is left, so the document receives the key as it did;
 * - the recording had the focus on an element and now no element has it → the element
 *   the note names (same tag and id, else same tag and label, else the only one of its
 *   tag) is focused. When some other element holds the focus, the page put it there: it
 *   is left alone.
 *
 * Whether the key then reached the document is also read (a capturing keydown listener
 * on `window` that lives only for the press), so a record can say when a key went
 * nowhere.
 */
import type { Page } from "playwright";
import { evaluateInPage } from "./page-scripts.ts";

/** Where the focus was: the document (no element focused), an element, or a child frame. */
export type KeyFocus =
  | { readonly on: "page" }
  | { readonly on: "frame" }
  | {
      readonly on: "element";
      /** Lower-case tag name, e.g. "canvas". */
      readonly tag: string;
      readonly id?: string;
      /** Its aria-label, title, name, placeholder or first visible text (at most LABEL_MAX_CHARS). */
      readonly label?: string;
    };

/** A label longer than this is cut: it identifies the element, it does not quote the page. */
export const LABEL_MAX_CHARS = 60;

export interface FocusReading {
  readonly focus: KeyFocus;
  /** `document.hasFocus()`: false when the page itself has no focus. */
  readonly documentHasFocus: boolean;
}

type InPageRequest = { mode: "read"; maxLabel: number } | { mode: "focus"; maxLabel: number; target: { tag: string; id?: string; label?: string } };
type InPageAnswer = { focus: KeyFocus; documentHasFocus: boolean; focused?: string };

/** Runs in the page (as source text, see page-scripts.ts): reads the focus, or focuses the element a note names. */
function keyFocusInPage(request: InPageRequest): InPageAnswer {
  const labelOf = (element: Element): string => {
    const attribute = ["aria-label", "title", "name", "placeholder"].map((name) => element.getAttribute(name)?.trim() ?? "").find((value) => value !== "");
    const text = attribute ?? ((element as HTMLElement).innerText ?? element.textContent ?? "").replace(/\s+/g, " ").trim();
    return text.slice(0, request.maxLabel);
  };
  const read = (): KeyFocus => {
    const active = document.activeElement;
    if (!active || active === document.body || active === document.documentElement) return { on: "page" };
    if (active.tagName === "IFRAME" || active.tagName === "FRAME") return { on: "frame" };
    const label = labelOf(active);
    return { on: "element", tag: active.tagName.toLowerCase(), ...(active.id ? { id: active.id } : {}), ...(label ? { label } : {}) };
  };
  if (request.mode === "read") return { focus: read(), documentHasFocus: document.hasFocus() };
  const { target } = request;
  const ofTag = Array.from(document.getElementsByTagName(target.tag));
  const byId = target.id ? document.getElementById(target.id) : null;
  const chosen =
    (byId && byId.tagName.toLowerCase() === target.tag ? byId : undefined) ??
    (target.label ? ofTag.find((element) => labelOf(element) === target.label) : undefined) ??
    (ofTag.length === 1 ? ofTag[0] : undefined);
  if (chosen) (chosen as HTMLElement).focus({ preventScroll: true });
  const focused = chosen && document.activeElement === chosen ? `<${target.tag}${chosen.id ? `#${chosen.id}` : ""}>` : undefined;
  return { focus: read(), documentHasFocus: document.hasFocus(), ...(focused ? { focused } : {}) };
}

export async function readKeyFocus(page: Page): Promise<FocusReading> {
  const { focus, documentHasFocus } = await evaluateInPage(page, keyFocusInPage, { mode: "read", maxLabel: LABEL_MAX_CHARS });
  return { focus, documentHasFocus };
}

/** Runs in the page: moves the focus out of a child frame, back to the document. */
function leaveChildFrameInPage(): boolean {
  const active = document.activeElement as HTMLElement | null;
  if (!active || (active.tagName !== "IFRAME" && active.tagName !== "FRAME")) return false;
  active.blur();
  window.focus();
  return document.activeElement !== active;
}

/**
 * Before a key press: gives the page focus the way `recorded` says it was (see the module
 * comment); without a note (a dataset recorded elsewhere) only a page with no focus at all
 * is given focus. Returns what was done, in words, or undefined when the focus already was
 * where it should be.
 */
export async function giveKeyFocus(page: Page, recorded: KeyFocus | undefined): Promise<string | undefined> {
  const done: string[] = [];
  let now = await readKeyFocus(page);
  if (!now.documentHasFocus) {
    await page.bringToFront();
    await page.evaluate(() => window.focus());
    now = await readKeyFocus(page);
    done.push(now.documentHasFocus ? "gave the page focus (it had none)" : "tried to give the page focus (it had none; it still has none)");
  }
  if (recorded?.on === "page" && now.focus.on === "frame") {
    if (await evaluateInPage(page, leaveChildFrameInPage, undefined))
      done.push("moved the focus from a child frame back to the page, where it was when recorded");
  }
  if (recorded?.on === "element" && now.focus.on === "page") {
    const { tag, id, label } = recorded;
    const answer = await evaluateInPage(page, keyFocusInPage, {
      mode: "focus",
      maxLabel: LABEL_MAX_CHARS,
      target: { tag, ...(id ? { id } : {}), ...(label ? { label } : {}) },
    });
    done.push(
      answer.focused
        ? `focused ${answer.focused}, where the focus was when recorded (no element had it)`
        : `no element had the focus and none matches the recorded <${tag}${id ? `#${id}` : ""}>`,
    );
  }
  return done.length > 0 ? done.join("; ") : undefined;
}

const WITNESS_KEY = "iwr.keyWitness";

/** Runs in the page: counts keydown events reaching the window from now on (capturing, so first). */
function armWitnessInPage(key: string): void {
  const slot = Symbol.for(key);
  const holder = window as unknown as Record<symbol, { count: number; listener: () => void } | undefined>;
  const previous = holder[slot];
  if (previous) window.removeEventListener("keydown", previous.listener, true);
  const state = { count: 0, listener: () => {} };
  state.listener = () => {
    state.count += 1;
  };
  window.addEventListener("keydown", state.listener, true);
  holder[slot] = state;
}

/** Runs in the page: how many keydowns the witness saw (null when this document never had one: the key navigated), and removes it. */
function readWitnessInPage(key: string): number | null {
  const slot = Symbol.for(key);
  const holder = window as unknown as Record<symbol, { count: number; listener: () => void } | undefined>;
  const state = holder[slot];
  if (!state) return null;
  window.removeEventListener("keydown", state.listener, true);
  delete holder[slot];
  return state.count;
}

/**
 * Presses through `press` with a witness on the page's window: resolves whether a
 * keydown reached the document (undefined when the press navigated to another document,
 * so nobody could tell).
 */
export async function pressWatched<T>(page: Page, press: () => Promise<T>): Promise<{ result: T; reachedPage: boolean | undefined }> {
  await evaluateInPage(page, armWitnessInPage, WITNESS_KEY);
  const result = await press();
  const count = await evaluateInPage(page, readWitnessInPage, WITNESS_KEY).catch(() => null);
  return { result, reachedPage: count === null ? undefined : count > 0 };
}
