/**
 * Reading the benchmark's natural-language descriptions and assertions without a
 * model: the literal strings they quote, the numbers they name, and their words.
 * Shared by the heuristic grounder and the heuristic assertion judge.
 */

/** Straight and curly quotes; a single quote counts only when it is not an apostrophe inside a word. */
const QUOTED = [
  /"([^"\n]{1,120})"/g,
  /“([^”\n]{1,120})”/g,
  /‘([^’\n]{1,120})’/g,
  /(?<![\p{L}\p{N}])'([^'\n]{1,120}?)'(?![\p{L}\p{N}])/gu,
];

export function quotedStrings(text: string): string[] {
  const found: string[] = [];
  for (const pattern of QUOTED) {
    for (const match of text.matchAll(pattern)) {
      const inner = match[1]?.trim();
      if (inner) found.push(inner);
    }
  }
  return [...new Set(found)];
}

/** Text with its quoted parts removed (numbers and words inside quotes are already covered by quotedStrings). */
export function withoutQuoted(text: string): string {
  let rest = text;
  for (const pattern of QUOTED) rest = rest.replace(pattern, " ");
  return rest;
}

/** Numbers written as digits outside quotes: "the counter shows 3", "$12.50", "1,024 items". */
export function namedNumbers(text: string): string[] {
  const numbers = withoutQuoted(text).match(/(?<![\p{L}\p{N}])\d+(?:[.,]\d+)*(?![\p{L}\p{N}])/gu) ?? [];
  return [...new Set(numbers)];
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
  "a", "an", "the", "of", "to", "in", "on", "at", "for", "with", "and", "or", "is", "are", "be", "this", "that",
  "it", "its", "by", "from", "into", "onto", "as", "which", "labeled", "labelled", "called", "named", "saying",
  "reads", "reading", "text", "says", "shows", "showing", "contains", "containing", "element", "area", "section",
  "page", "click", "clicks", "clicking", "type", "types", "typing", "user", "then", "there", "here", "next", "near",
  "beside", "below", "above", "under", "over", "inside", "within", "one", "all", "any", "some", "currently", "now",
]);

/** Verbs that put the number after them on the screen: "shows 3", "the score is 60", "becomes a 32". */
const DISPLAY_NUMBER = /\b(?:shows?|showing|reads?|reading|displays?|displaying|says|is|are|becomes?|became|changes? to|goes to|drops? to|rises? to|increases? to|decreases? to|updates? to|stays?|remains?|equals?|counts?|total(?:s|ling)?)\s+(?:(?:a|an|the|now|only|just|still|exactly)\s+)?([$€£]?\d+(?:[.,]\d+)*%?)(?![\p{L}\p{N}])/giu;

/**
 * Numbers an assertion says are shown ("Moves shows 3", "the score is 60"), outside
 * quotes. Counts in prose ("all 16 cards", "the two 8s", "a new 4 tile") are not
 * screen text and are left out.
 */
export function displayedNumbers(text: string): string[] {
  return [...new Set(Array.from(withoutQuoted(text).matchAll(DISPLAY_NUMBER), (match) => match[1] ?? "").filter(Boolean))];
}

/** Words right before or after a quoted string that say it should NOT be on the new screen. */
const GONE_BEFORE = /\b(?:from|instead of|no longer|not|without|replaces?|replacing)\s+(?:the\s+)?$/i;
const GONE_AFTER = /^\s*(?:is\s+|are\s+)?(?:disappears?|vanish(?:es)?|(?:is |are )?(?:removed|gone|hidden|deleted|cleared)|goes away|closes)\b/i;

/** Quoted strings the assertion expects on the screen (not the ones it says went away). */
export function expectedQuotedStrings(text: string): string[] {
  const expected: string[] = [];
  for (const pattern of [/"([^"\n]{1,120})"/g, /“([^”\n]{1,120})”/g, /‘([^’\n]{1,120})’/g, /(?<![\p{L}\p{N}])'([^'\n]{1,120}?)'(?![\p{L}\p{N}])/gu]) {
    for (const match of text.matchAll(pattern)) {
      const inner = match[1]?.trim();
      const start = match.index ?? 0;
      if (!inner) continue;
      if (GONE_BEFORE.test(text.slice(Math.max(0, start - 30), start))) continue;
      if (GONE_AFTER.test(text.slice(start + match[0].length, start + match[0].length + 40))) continue;
      expected.push(inner);
    }
  }
  return [...new Set(expected)];
}
