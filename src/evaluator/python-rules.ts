/**
 * The few rules of Python's own that the harness's numbers depend on, where JavaScript's
 * built-ins differ. The judge parse (assertion_scorer.py) depends on three:
 *
 * - `str.strip()` removes the characters `str.isspace()` accepts: JavaScript's `trim()`
 *   also removes U+FEFF (a byte-order mark) and keeps U+001C–U+001F and U+0085, which
 *   Python removes;
 * - `json.loads` accepts the constants `NaN`, `Infinity` and `-Infinity` where a value
 *   may stand; `JSON.parse` rejects them;
 * - a `str` is indexed by code point: `text[a:-1]` drops the last character whole, where
 *   JavaScript's `slice(a, -1)` would cut an astral character (an emoji) in half.
 *
 * Both grammars otherwise agree (the same whitespace between tokens, strings, numbers,
 * literals; a byte-order mark before the JSON is an error in both).
 *
 * The averages evaluate.py writes depend on a fourth: the built-in `sum()` of floats, which
 * since Python 3.12 (the version of the harness's own compiled files) adds with Neumaier's
 * compensation, so its result can differ from a plain left-to-right sum in the last bits.
 */

/** Every character Python's `str.isspace()` accepts (the same set in every Python 3 since 3.6; all in the BMP). */
const PYTHON_WHITESPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
  0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** Python's `text.strip()` with no argument. */
export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PYTHON_WHITESPACE.has(text.charCodeAt(start))) start += 1;
  while (end > start && PYTHON_WHITESPACE.has(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(start, end);
}

/** Python's `text[start:-1]`: from `start` (a UTF-16 offset on a character boundary) to the last character, which is dropped whole. */
export function pythonSliceDropLast(text: string, start: number): string {
  if (start >= text.length) return "";
  const last = text.codePointAt(text.length - 2);
  const lastWidth = last !== undefined && last > 0xffff ? 2 : 1;
  return text.slice(start, Math.max(start, text.length - lastWidth));
}

/** Python's constants of non-finite numbers, as `json.loads` reads them: the longest first. */
const NON_FINITE_CONSTANTS = ["-Infinity", "Infinity", "NaN"] as const;

/**
 * Python's `json.loads(text)`: `{ ok: true, value }` when Python accepts the text, else
 * `{ ok: false }`. The non-finite constants are read as `null`: a verdict cannot be one
 * (a `result` of NaN is no verdict, as null is), and nothing here needs their value.
 */
export function pythonJsonLoads(text: string): { ok: true; value: unknown } | { ok: false } {
  let rewritten = "";
  let index = 0;
  let copiedUpTo = 0;
  while (index < text.length) {
    const char = text[index];
    if (char === '"') {
      // Skip the string: its contents are never a constant (a malformed string fails in both parsers alike).
      index += 1;
      while (index < text.length && text[index] !== '"') index += text[index] === "\\" ? 2 : 1;
      index += 1;
      continue;
    }
    const constant = NON_FINITE_CONSTANTS.find((name) => text.startsWith(name, index));
    if (constant) {
      rewritten += `${text.slice(copiedUpTo, index)}null`;
      index += constant.length;
      copiedUpTo = index;
      continue;
    }
    index += 1;
  }
  rewritten += text.slice(copiedUpTo);
  try {
    return { ok: true, value: JSON.parse(rewritten) };
  } catch {
    return { ok: false };
  }
}

/**
 * Python's `sum(values)` of floats (CPython 3.12 and later, `builtin_sum_impl`): the start
 * value 0 plus the first item, then Neumaier's compensated addition of the rest, the
 * compensation added at the end when it is non-zero and finite. `sum([0.1] * 10)` is 1.0
 * here, 0.9999999999999999 added plainly. Under Python 3.11 and earlier the harness adds
 * plainly and the last bits may differ.
 */
export function pythonSum(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let total = 0 + (values[0] ?? 0);
  let compensation = 0;
  for (const value of values.slice(1)) {
    const next = total + value;
    compensation += Math.abs(total) >= Math.abs(value) ? total - next + value : value - next + total;
    total = next;
  }
  return compensation !== 0 && Number.isFinite(compensation) ? total + compensation : total;
}
