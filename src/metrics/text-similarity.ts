/**
 * §3.5 OCR similarity, exactly as the benchmark computes it:
 * 1 − Levenshtein(a, b) / max(len a, len b) on lower-cased texts; both empty → 1,
 * exactly one empty → 0 (emptiness is judged before lower-casing, as the harness does).
 */
import { distance } from "fastest-levenshtein";

/** Segments read by an OCR engine, trimmed, empty ones dropped, joined by single spaces. */
export function joinOcrSegments(segments: readonly string[]): string {
  return segments
    .map((segment) => segment.trim())
    .filter((segment) => segment.length > 0)
    .join(" ");
}

export function textSimilarity(a: string, b: string): number {
  if (a.length === 0 && b.length === 0) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  const longest = Math.max(left.length, right.length);
  return 1 - distance(left, right) / longest;
}
