/**
 * What an assertion says about the state of the page's controls, checked against the
 * candidate's screen text (src/browser/screen-text.ts, read from its DOM): which named
 * radio, checkbox, switch or option is selected or not, and which field shows the text an
 * action typed. A control's state is a fact of the DOM, exact where pixels are not: a
 * pointer's hover or a focus ring beside a radio changes as many pixels as its dot, and a
 * typed value may also be written elsewhere on the screen (a "10" typed into a box and
 * "10" in a list of ratings).
 *
 * Both checks only ever add a No: a claim the page's controls do not bear out. Where the
 * assertion names no control the screen has, or the page draws its controls without the
 * DOM's states (a canvas, a styled div), they say nothing and the other rules decide.
 */

import escapeRegExp from "escape-string-regexp";
import type { ScreenText } from "../../browser/screen-text.ts";
import { normalizeText, quotedSpansOf } from "../../replay/grounding/description-text.ts";

/** A control the assertion says is selected (true) or not (false), and the words that named it. */
export interface ControlClaim {
  named: string;
  selected: boolean;
  /** The words say the state is new ("is now selected", "selected again", "no longer"): it was the other one before. */
  newly: boolean;
}

/** A control whose claim the candidate's screens do not bear out, and how. */
export interface UnmetClaim extends ControlClaim {
  /** `state`: not in the claimed state after the action; `unchanged`: in it already before, though the words say it is new. */
  how: "state" | "unchanged";
}

/** Words that state a control's selection, and the ones that deny it within the same clause. */
const SELECTION_WORDS = /\b(?:selected|checked|ticked|chosen|picked|unchecked|unselected|unticked|deselected)\b/i;
const DENIAL_WORDS = /\b(?:no longer|not|n't|unchecked|unselected|unticked|deselected)\b/i;
/** What follows these in a clause is the thing that lost the selection to another ("A is selected instead of B"). */
const REPLACED_MARKER = /\b(?:instead of|rather than|in place of)\b/i;
/** Words that make a claimed state new: it was the other one before the action. */
const NEWLY_WORDS = /\b(?:now|again|becomes?|gets?|got|turns?|no longer|instead of|rather than|in place of)\b/i;
/** Clauses: a claim holds within one ("A is selected and B is no longer selected" is two). */
const CLAUSE_BREAK = /;|,?\s+\b(?:and|but|while|whereas)\b\s+|,\s+/i;
/** Labels this short are abbreviations ("UK", "US"): they match only as written, so the word "us" does not name the US option. */
const ABBREVIATION_MAX = 3;

/** Where `label` is named in `clause`: word-bounded, any case, except short labels, which must be written as on screen. */
function namedAt(label: string, clause: string): number {
  const trimmed = label.trim();
  if (!trimmed) return -1;
  const flags = trimmed.length <= ABBREVIATION_MAX ? "u" : "iu";
  const match = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(trimmed)}(?![\\p{L}\\p{N}])`, flags).exec(clause);
  return match ? match.index : -1;
}

/**
 * The selection claims of an assertion about the controls a screen shows: in each clause
 * that speaks of selection, every control named (by its label, or by quoted words that
 * are part of exactly one label) is claimed selected, unless the clause denies it or names
 * it after "instead of"; a clause that only denies takes its subject from the clause before.
 * A claim is `newly` when its clause says the state is new ("now", "again", "becomes",
 * "no longer", "instead of").
 * A name inside a longer one named at the same place counts once.
 */
export function controlClaims(assertion: string, screen: ScreenText): ControlClaim[] {
  const labels = [...new Set(screen.controls.map((control) => control.label.trim()).filter(Boolean))];
  if (labels.length === 0) return [];
  const claims = new Map<string, ControlClaim>();
  let previousSpokeOfSelection = false;
  for (const clause of assertion.split(CLAUSE_BREAK)) {
    // A clause that only denies ("'Daily' is selected and 'Weekly' is not") borrows the selection from the one before.
    const speaksOfSelection: boolean = Boolean(clause) && (SELECTION_WORDS.test(clause) || (previousSpokeOfSelection && DENIAL_WORDS.test(clause)));
    previousSpokeOfSelection = speaksOfSelection;
    if (!speaksOfSelection) continue;
    const replacedFrom = REPLACED_MARKER.exec(clause)?.index ?? Number.POSITIVE_INFINITY;
    const denied = DENIAL_WORDS.test(clause.slice(0, replacedFrom));
    const newly = NEWLY_WORDS.test(clause);
    const mentions: Array<{ label: string; at: number; length: number }> = [];
    for (const label of labels) {
      const at = namedAt(label, clause);
      if (at >= 0) mentions.push({ label, at, length: label.length });
    }
    // Quoted words that are part of one label only ("the 'lower bound' option").
    for (const span of quotedSpansOf(clause)) {
      const wanted = normalizeText(span.text);
      const holders = labels.filter((label) => wanted && ` ${normalizeText(label)} `.includes(` ${wanted} `));
      if (holders.length === 1 && !mentions.some((mention) => mention.label === holders[0])) {
        mentions.push({ label: holders[0]!, at: span.start, length: span.end - span.start });
      }
    }
    const kept = mentions.filter(
      (mention) =>
        !mentions.some(
          (other) => other !== mention && other.length > mention.length && other.at <= mention.at && other.at + other.length >= mention.at + mention.length,
        ),
    );
    for (const mention of kept) {
      const selected = mention.at > replacedFrom ? false : !denied;
      claims.set(mention.label, { named: mention.label, selected, newly });
    }
  }
  return [...claims.values()];
}

/**
 * The claims the candidate's controls contradict: after the action, no control of that
 * name is in the claimed state; or the words say the state is new and, before the action,
 * every control of that name was in it already (the action changed nothing of it).
 */
export function unmetControlClaims(assertion: string, after: ScreenText, before?: ScreenText): UnmetClaim[] {
  const inState = (screen: ScreenText, claim: ControlClaim) => screen.controls.filter((control) => control.label.trim() === claim.named);
  const unmet: UnmetClaim[] = [];
  for (const claim of controlClaims(assertion, after)) {
    if (!inState(after, claim).some((control) => control.checked === claim.selected)) {
      unmet.push({ ...claim, how: "state" });
      continue;
    }
    const earlier = before ? inState(before, claim) : [];
    if (claim.newly && earlier.length > 0 && earlier.every((control) => control.checked === claim.selected)) unmet.push({ ...claim, how: "unchanged" });
  }
  return unmet;
}

/** Nouns for a place that holds typed text. */
const FIELD_WORDS = /\b(?:box|field|input|textbox|text area|textarea|search bar|bar)\b/i;

/**
 * After an action typed `typed`, whether the assertion says a field shows it (it names a
 * field and the typed text) while the candidate's screen has fields and none shows it.
 * undefined when the rule does not apply; else whether the text is in a field.
 */
export function typedTextInField(options: { assertion: string; typed: string | undefined; screen: ScreenText }): boolean | undefined {
  const wanted = normalizeText(options.typed ?? "");
  if (!wanted || !FIELD_WORDS.test(options.assertion)) return undefined;
  if (!` ${normalizeText(options.assertion)} `.includes(` ${wanted} `)) return undefined;
  const fields = options.screen.items.filter((item) => item.kind === "value" || item.kind === "placeholder");
  if (fields.length === 0) return undefined;
  return fields.some((item) => item.kind === "value" && ` ${normalizeText(item.text)} `.includes(` ${wanted} `));
}
