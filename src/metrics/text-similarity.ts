/**
 * §3.5 OCR similarity, exactly as the benchmark computes it:
 * 1 − Levenshtein(a, b) / max(len a, len b) on lower-cased texts; both empty → 1,
 * exactly one empty → 0 (emptiness is judged before lower-casing, as the harness does).
 *
 * Lengths and edits count characters (Unicode code points), as python-Levenshtein does on
 * a Python `str`, not UTF-16 code units: an emoji or any other character outside the
 * Basic Multilingual Plane is one character, one edit. Both profiles measure it so: a
 * JavaScript string's encoding is not a property of the text read from the screen.
 */
import { distance } from "fastest-levenshtein";

/** Segments read by an OCR engine, trimmed, empty ones dropped, joined by single spaces. */
export function joinOcrSegments(segments: readonly string[]): string {
  return segments
    .map((segment) => segment.trim())
    .filter((segment) => segment.length > 0)
    .join(" ");
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Levenshtein distance over arrays of characters (plain dynamic programming, two rows):
 * the measure when two texts hold more distinct characters than one code unit can name.
 */
export function characterEditDistance(a: readonly string[], b: readonly string[]): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Edit distance and the longer length, both in code points. Texts without a surrogate are
 * measured as they are (a code unit is then a code point); otherwise each distinct code
 * point is given one code unit of its own, which keeps equality and so the distance, and
 * the fast bit-parallel distance is used on the recoded texts.
 */
function codePointMeasures(a: string, b: string): { edits: number; longest: number } {
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return { edits: distance(a, b), longest: Math.max(a.length, b.length) };
  const left = Array.from(a);
  const right = Array.from(b);
  const longest = Math.max(left.length, right.length);
  const units = new Map<string, string>();
  for (const char of [...left, ...right]) if (!units.has(char)) units.set(char, String.fromCharCode(units.size));
  // More distinct characters than one code unit can name: measured on the arrays themselves.
  if (units.size > 0x10000) return { edits: characterEditDistance(left, right), longest };
  const recode = (chars: readonly string[]) => chars.map((char) => units.get(char)).join("");
  return { edits: distance(recode(left), recode(right)), longest };
}

export function textSimilarity(a: string, b: string): number {
  if (a.length === 0 && b.length === 0) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  const { edits, longest } = codePointMeasures(a.toLowerCase(), b.toLowerCase());
  return 1 - edits / longest;
}
