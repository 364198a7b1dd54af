/**
 * Reading the benchmark's natural-language descriptions and assertions without a
 * model: the literal strings they quote, the numbers they name, and their words.
 * Shared by the heuristic grounder and the heuristic assertion judge.
 */

/** Straight and curly quotes; a single quote counts only when it is not an apostrophe inside a word. */
const QUOTED = [/"([^"\n]{1,120})"/g, /“([^”\n]{1,120})”/g, /‘([^’\n]{1,120})’/g, /(?<![\p{L}\p{N}])'([^'\n]{1,120}?)'(?![\p{L}\p{N}])/gu];

/** Every quoted string with where it stands in `text` (start and end of the quotes). */
export function* quotedSpansOf(text: string): Generator<{ text: string; start: number; end: number }> {
  for (const pattern of QUOTED) {
    for (const match of text.matchAll(pattern)) {
      const inner = match[1]?.trim();
      if (inner) yield { text: inner, start: match.index ?? 0, end: (match.index ?? 0) + match[0].length };
    }
  }
}

/** The strings a description or assertion quotes, in pattern order, each once. */
export function quotedStrings(text: string): string[] {
  return [...new Set(Array.from(quotedSpansOf(text), (span) => span.text))];
}

/**
 * The text a Type action enters when its line carries no `parameters.text` (the real
 * dataset's lines never do: the text is only in the description). The quoted string
 * right after "with" ("fill the name field with 'Ada'") is the text, else the first
 * quoted string in reading order ("type 'milk' into the 'Add item' box"). Returns the
 * text and the description without it (what the target is described by), or undefined
 * when nothing is quoted.
 */
export function typedTextOf(description: string, known?: string): { text: string; target: string } | undefined {
  const spans = [...quotedSpansOf(description)].sort((a, b) => a.start - b.start);
  // A line that carries its text and also quotes it: the quote names the text, not the target.
  if (known !== undefined) {
    const quotedKnown = spans.find((span) => span.text === known.trim());
    return quotedKnown ? { text: known, target: withoutSpan(description, quotedKnown) } : undefined;
  }
  if (spans.length === 0) return undefined;
  const afterWith = spans.find((span) => /\bwith\s*$/i.test(description.slice(Math.max(0, span.start - 12), span.start)));
  const chosen = afterWith ?? spans[0]!;
  return { text: chosen.text, target: withoutSpan(description, chosen) };
}

function withoutSpan(text: string, span: { start: number; end: number }): string {
  return `${text.slice(0, span.start)} ${text.slice(span.end)}`.replace(/\s+/g, " ").trim();
}

/** Text with its quoted parts removed (numbers and words inside quotes are already covered by quotedStrings). */
export function withoutQuoted(text: string): string {
  let rest = text;
  for (const pattern of QUOTED) rest = rest.replace(pattern, " ");
  return rest;
}

/** Lower-case, accents removed, every run of non-alphanumerics made one space. */
export function normalizeText(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Splits identifiers too: "addToCart", "add-to-cart", "add_to_cart" → add, to, cart. */
export function words(text: string): string[] {
  const spaced = text.replace(/([a-z])([A-Z])/g, "$1 $2");
  const normalized = normalizeText(spaced);
  return normalized ? normalized.split(" ") : [];
}

/** A light stemmer: enough to match "items"/"item", "added"/"add", "opening"/"open". */
export function stem(word: string): string {
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith("es") && !word.endsWith("ses")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

export const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "of",
  "to",
  "in",
  "on",
  "at",
  "for",
  "with",
  "and",
  "or",
  "is",
  "are",
  "be",
  "this",
  "that",
  "it",
  "its",
  "by",
  "from",
  "into",
  "onto",
  "as",
  "which",
  "labeled",
  "labelled",
  "called",
  "named",
  "saying",
  "reads",
  "reading",
  "text",
  "says",
  "shows",
  "showing",
  "contains",
  "containing",
  "element",
  "area",
  "section",
  "page",
  "click",
  "clicks",
  "clicking",
  "type",
  "types",
  "typing",
  "user",
  "then",
  "there",
  "here",
  "next",
  "near",
  "beside",
  "below",
  "above",
  "under",
  "over",
  "inside",
  "within",
  "one",
  "all",
  "any",
  "some",
  "currently",
  "now",
]);

const DISPLAY_VERBS = [
  "shows?",
  "showing",
  "reads?",
  "reading",
  "displays?",
  "displaying",
  "says",
  "is",
  "are",
  "becomes?",
  "became",
  "changes? to",
  "goes to",
  "drops? to",
  "rises? to",
  "increases? to",
  "decreases? to",
  "updates? to",
  "stays?",
  "remains?",
  "equals?",
  "counts?",
  "total(?:s|ling)?",
];
/** Verbs that put the number after them on the screen: "shows 3", "the score is 60", "becomes a 32". */
const DISPLAY_NUMBER = new RegExp(
  `\\b(?:${DISPLAY_VERBS.join("|")})\\s+(?:(?:a|an|the|now|only|just|still|exactly)\\s+)?([$€£]?\\d+(?:[.,]\\d+)*%?)(?![\\p{L}\\p{N}])`,
  "giu",
);

/**
 * What an assertion says about each literal it names, the one place these rules live
 * (the offline judge checks them, the mutant oracle reads them, the grounder takes the
 * quoted strings):
 *
 * - `appears` (the default): it is shown after the step.
 * - `stays`: the assertion says it is still there ("still shows", "remains", "stays").
 * - `gone`: the assertion says it went away ("disappears", "is removed", "closes",
 *   "no longer", "instead of", "replaces"): not shown after the step.
 * - `was`: what the page showed before ("changes from 'A' to 'B'", "moves from 'To do'").
 *
 * Quoted strings are `decisive` (the judge must read them); numbers named in prose
 * ("Moves shows 3") are literals too but not decisive: OCR misses lone digits on tiles
 * and badges too often for an unread digit to mean the page is wrong. No literal is
 * dropped: each gets a role.
 */
export type LiteralRole = "appears" | "stays" | "gone" | "was";

export interface AssertionLiteral {
  text: string;
  role: LiteralRole;
  decisive: boolean;
}

const CHANGE_VERBS = [
  "changes?",
  "changed",
  "moves?",
  "moved",
  "switch(?:es|ed)?",
  "goes",
  "went",
  "turns?",
  "turned",
  "drops?",
  "dropped",
  "jumps?",
  "jumped",
  "updates?",
  "updated",
];
const STAYS_BEFORE = [
  "still(?: (?:shows?|reads?|says|displays?|lists?|contains?))?",
  "remains?",
  "stays?",
  "keeps? (?:showing|reading)",
  "continues? to (?:show|read)",
];
const GONE_AFTER = [
  "disappears?",
  "vanish(?:es)?",
  "removed",
  "gone",
  "hidden",
  "deleted",
  "cleared",
  "goes away",
  "closes",
  "closed",
  "collapses",
  "is no longer (?:shown|visible|displayed|listed)",
];
/** Words right before a literal (or after it, up to three words on) that give it a role. */
const ROLE_BEFORE: Array<[LiteralRole, RegExp]> = [
  // "from" only after a verb of change: "changes from 'A' to 'B'", not "a quote from 'Mira'".
  ["was", new RegExp(`\\b(?:(?:${CHANGE_VERBS.join("|")})(?:\\s+[\\w-]+){0,2}\\s+from|was|used to (?:read|show|say))\\s+(?:the\\s+)?$`, "i")],
  [
    "gone",
    /\b(?:no longer(?: (?:shows?|reads?|displays?|lists?|contains?))?|without|instead of|replac(?:es|ing)|removes?|hides?|deletes?|clears?)\s+(?:the\s+)?$/i,
  ],
  ["stays", new RegExp(`\\b(?:${STAYS_BEFORE.join("|")})\\s+(?:the\\s+)?(?:\\w+\\s+){0,2}$`, "i")],
];
const ROLE_AFTER: Array<[LiteralRole, RegExp]> = [
  // Up to three words between ("'Settings' dialog closes"), but not across "and"/"but" or punctuation.
  ["gone", new RegExp(`^\\s*(?:(?!and\\b|but\\b|while\\b)[\\w-]+\\s+){0,3}?(?:is |are )?(?:${GONE_AFTER.join("|")})\\b`, "i")],
  ["stays", /^\s*(?:is |are )?(?:still (?:shown|there|visible|displayed|listed)|remains?|stays?|unchanged)\b/i],
];

function roleAt(text: string, start: number, end: number, wholeStays: boolean): LiteralRole {
  const before = text.slice(Math.max(0, start - 40), start);
  const after = text.slice(end, end + 48);
  for (const [role, pattern] of ROLE_BEFORE) if (pattern.test(before)) return role;
  for (const [role, pattern] of ROLE_AFTER) if (pattern.test(after)) return role;
  return wholeStays ? "stays" : "appears";
}

const NO_CHANGE_PHRASES = [
  "nothing\\s+(?:happens|changes)",
  "no\\s+change",
  "(?:does|did)\\s*(?:not|n't)\\s+change",
  "(?:stays?|remains?|stayed|remained)\\s+" +
    "(?:the\\s+same|unchanged|empty|closed|open|hidden|blank|as\\s+(?:it|they)\\s+(?:was|were)|where\\s+(?:it|they)\\s+(?:was|were)|in\\s+place)",
  "(?:is|are|stays?|remains?)\\s+unchanged",
];
/**
 * Assertions that say the page, or the thing they name, stays as it was ("Nothing
 * changes", "the page stays the same", "the list remains empty"). A value staying ("the
 * score stays 72", "'X' is still shown") is a literal's role, not this, and "Only the
 * Puffin Air flights remain" is a change.
 */
export const NO_CHANGE = new RegExp(`\\b(?:${NO_CHANGE_PHRASES.join("|")})\\b`, "i");

export function impliesChange(assertion: string): boolean {
  return !NO_CHANGE.test(assertion);
}

/** Every literal the assertion names, quoted first (in order), then numbers it says are shown. */
export function assertionLiteralList(assertion: string): AssertionLiteral[] {
  const wholeStays = !impliesChange(assertion);
  const literals: AssertionLiteral[] = [];
  const seen = new Set<string>();
  const quotedSpans = [...quotedSpansOf(assertion)].sort((a, b) => a.start - b.start);
  for (const span of quotedSpans) {
    if (seen.has(span.text)) continue;
    seen.add(span.text);
    literals.push({ text: span.text, role: roleAt(assertion, span.start, span.end, wholeStays), decisive: true });
  }
  const prose = withoutQuoted(assertion);
  for (const match of prose.matchAll(DISPLAY_NUMBER)) {
    const number = match[1];
    if (!number || seen.has(number)) continue;
    seen.add(number);
    const start = (match.index ?? 0) + match[0].lastIndexOf(number);
    // Verbs like "stays" or "still shows" are part of the match: read the role from the words it begins with.
    const role: LiteralRole =
      /^(?:stays?|remains?)\b/i.test(match[0]) || /\bstill\s+$/i.test(prose.slice(Math.max(0, (match.index ?? 0) - 8), match.index ?? 0))
        ? "stays"
        : roleAt(prose, start, start + number.length, wholeStays);
    literals.push({ text: number, role, decisive: false });
  }
  return literals;
}

/** The literals the judge must read after the step (`decisive`) and the ones it looks for but does not require (`reported`). */
export function assertionLiterals(assertion: string): { decisive: string[]; reported: string[] } {
  const literals = assertionLiteralList(assertion).filter((literal) => literal.role === "appears" || literal.role === "stays");
  return {
    decisive: literals.filter((literal) => literal.decisive).map((literal) => literal.text),
    reported: literals.filter((literal) => !literal.decisive).map((literal) => literal.text),
  };
}
