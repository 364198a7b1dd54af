/**
 * The offline assertion judge: "Yes" when (1) the screen changed visibly between the
 * screenshots before and after the action, if the assertion implies a change, and
 * (2) every literal the assertion quotes ('Buy milk', '$94.49', '1 / 8') is read by OCR
 * on the new screen. Numbers named in prose ("Moves shows 3") are looked for too and
 * reported, but do not decide: Tesseract misses lone digits on tiles and badges too
 * often for an unread "3" to mean the page is wrong. Deterministic, no
 * model; calibration and CI use it. It cannot judge meaning ("the total is correct"),
 * so it is lenient where the assertion names nothing and strict where it names text:
 * a stand-in for the VLM, reported as such.
 *
 * OCR runs in two passes: the whole new screen (the same text the OCR metric reads,
 * cached), then, for literals not found there, each region that changed, cut out,
 * contrast-stretched, inverted when dark and enlarged — where small or light-on-dark
 * UI text (a cart badge, a calculator display) is read far more reliably.
 */
import sharp from "sharp";
import { distance } from "fastest-levenshtein";
import { readImageText } from "../metrics/ocr.ts";
import { displayedNumbers, expectedQuotedStrings, normalizeText } from "../../replay/grounding/description-text.ts";
import { changedRegions, pixelDiff, type Region } from "./pixel-diff.ts";
import type { AssertionJudge, AssertionInput, AssertionVerdict, HeuristicEvidence } from "./types.ts";

export const HEURISTIC_JUDGE_SETTINGS = Object.freeze({
  /** Fewer changed pixels than this is "nothing happened" (a typed letter changes ~50). */
  minChangedPixels: 40,
  /** A literal counts as read when some OCR window is at least this similar (OCR misreads letters). */
  literalSimilarity: 0.8,
  /** Literals this short must be read exactly (fuzzy matching a "3" means nothing). */
  exactBelowChars: 4,
  /** Changed regions read in the second pass, largest first. */
  maxRegions: 10,
  /**
   * How changed regions are read, in order, until every literal is found: margin around
   * the change (a label beside a changed number is often what the assertion names) and
   * enlargement (small text needs it, large text reads worse with it).
   */
  regionReadings: Object.freeze([
    Object.freeze({ padding: 16, scale: 2 }),
    Object.freeze({ padding: 40, scale: 1 }),
    Object.freeze({ padding: 40, scale: 2 }),
    Object.freeze({ padding: 16, scale: 1 }),
  ]),
  /** The largest side an enlarged crop may reach. */
  regionMaxSide: 2400,
  /** Enlargement of the whole screen in the last pass. */
  screenScale: 2,
});

/** Assertions that say the page should stay as it was. */
const NO_CHANGE = /\b(remains?|remained|unchanged|stays?|stayed|(?:does|did)\s*(?:not|n't)\s+change|no\s+change|nothing\s+(?:happens|changes))\b/i;

export function impliesChange(assertion: string): boolean {
  return !NO_CHANGE.test(assertion);
}

/** The literals the assertion says are on the new screen: quoted ones decide, prose numbers are only reported. */
export function assertionLiterals(assertion: string): { decisive: string[]; reported: string[] } {
  const decisive = expectedQuotedStrings(assertion);
  return { decisive, reported: displayedNumbers(assertion).filter((number) => !decisive.includes(number)) };
}

/** Best similarity of `literal` to any run of OCR words of about its length (1 = read exactly). */
export function literalSimilarity(literal: string, ocrText: string): number {
  const wanted = normalizeText(literal);
  const text = normalizeText(ocrText);
  if (!wanted) return 1;
  if (` ${text} `.includes(` ${wanted} `)) return 1;
  if (/^\d+( \d+)*$/.test(wanted)) {
    // Numbers and signs ('$9,873', '1 / 8', '12 × 5 = 60'): the digit groups in order, with only
    // signs (or the letter x OCR reads for ×) between them; OCR often glues a number to the
    // next word ("1items"), so only other digits may not touch it.
    const between = "[^\\p{L}\\p{N}]*(?:x[^\\p{L}\\p{N}]*)?";
    const pattern = new RegExp(`(?<!\\p{N})${wanted.split(" ").join(between)}(?!\\p{N})`, "u");
    return pattern.test(ocrText.toLowerCase()) ? 1 : 0;
  }
  if (wanted.length < HEURISTIC_JUDGE_SETTINGS.exactBelowChars) return 0;
  const ocrWords = text ? text.split(" ") : [];
  const span = wanted.split(" ").length;
  let best = 0;
  for (let length = Math.max(1, span - 1); length <= span + 1; length++) {
    for (let start = 0; start + length <= ocrWords.length; start++) {
      const window = ocrWords.slice(start, start + length).join(" ");
      const similarity = 1 - distance(window, wanted) / Math.max(window.length, wanted.length);
      if (similarity > best) best = similarity;
    }
  }
  return best;
}

/**
 * A region prepared for OCR: grey, contrast-stretched, dark crops inverted, enlarged
 * `scale` times (Tesseract reads best at one text size, which a region's is not known
 * to be: callers try more than one), on a white margin.
 */
async function regionForOcr(png: Buffer, region: Region, scale: number): Promise<Buffer> {
  const grey = sharp(png).extract(region).greyscale().normalise();
  const dark = ((await grey.clone().stats()).channels[0]?.mean ?? 255) < 110;
  const factor = Math.max(1, Math.min(scale, HEURISTIC_JUDGE_SETTINGS.regionMaxSide / Math.max(region.width, region.height)));
  return (dark ? grey.negate({ alpha: false }) : grey)
    .resize(Math.round(region.width * factor), Math.round(region.height * factor), { kernel: "lanczos3" })
    .extend({ top: 24, bottom: 24, left: 24, right: 24, background: "#ffffff" })
    .png()
    .toBuffer();
}

export function createHeuristicJudge(): AssertionJudge {
  return {
    kind: "heuristic",
    promptHashes: {},
    async judge(input: AssertionInput): Promise<AssertionVerdict> {
      const started = Date.now();
      const change = impliesChange(input.assertion);
      const diff = await pixelDiff(input.before, input.after);
      const { decisive, reported } = assertionLiterals(input.assertion);
      const literals = [...decisive, ...reported];
      const evidence: HeuristicEvidence = {
        impliesChange: change,
        changedPixels: diff.changedPixels,
        changedFraction: Math.round(diff.changedFraction * 1e6) / 1e6,
        literals: [],
      };
      const verdict = (result: "Yes" | "No", think: string): AssertionVerdict => ({ result, think, replies: [], attempts: 1, evidence, latencyMs: Date.now() - started });
      if (change && diff.changedPixels < HEURISTIC_JUDGE_SETTINGS.minChangedPixels) {
        return verdict("No", `the assertion implies a change but only ${diff.changedPixels} pixels changed`);
      }
      if (decisive.length === 0 && reported.length === 0) return verdict("Yes", `screen changed by ${diff.changedPixels} pixels; the assertion names no text to read`);

      const texts = [await readImageText(input.after)];
      const best = new Map(literals.map((literal) => [literal, literalSimilarity(literal, texts[0] ?? "")]));
      const missing = () => decisive.filter((literal) => (best.get(literal) ?? 0) < HEURISTIC_JUDGE_SETTINGS.literalSimilarity);
      const readMore = (text: string) => {
        texts.push(text);
        for (const literal of missing()) best.set(literal, Math.max(best.get(literal) ?? 0, literalSimilarity(literal, text)));
      };
      // Changed regions, tight and with a wider margin (a label beside a changed number), at two sizes.
      for (const { padding, scale } of HEURISTIC_JUDGE_SETTINGS.regionReadings) {
        if (missing().length === 0) break;
        for (const region of await changedRegions(input.before, input.after, { max: HEURISTIC_JUDGE_SETTINGS.maxRegions, padding })) {
          readMore(await readImageText(await regionForOcr(input.after, region, scale)));
          if (missing().length === 0) break;
        }
      }
      if (missing().length > 0) {
        // Last pass: the whole new screen enlarged (small text that did not change, such as a label above a display).
        const { width = 0, height = 0 } = await sharp(input.after).metadata();
        readMore(await readImageText(await regionForOcr(input.after, { left: 0, top: 0, width, height }, HEURISTIC_JUDGE_SETTINGS.screenScale)));
      }
      evidence.ocrText = texts.join(" | ");
      evidence.literals = literals.map((literal) => {
        const similarity = Math.round((best.get(literal) ?? 0) * 1000) / 1000;
        return { literal, found: similarity >= HEURISTIC_JUDGE_SETTINGS.literalSimilarity, similarity, decisive: decisive.includes(literal) };
      });
      const absent = evidence.literals.filter((entry) => !entry.found && entry.decisive);
      if (absent.length > 0) {
        return verdict("No", absent.map((entry) => `'${entry.literal}' is not on the new screen (best OCR match ${entry.similarity})`).join("; "));
      }
      const unread = evidence.literals.filter((entry) => !entry.found).map((entry) => entry.literal);
      return verdict(
        "Yes",
        `screen changed by ${diff.changedPixels} pixels; read ${decisive.map((literal) => `'${literal}'`).join(", ") || "no quoted text (none named)"}` +
          (unread.length > 0 ? `; not read (not decisive): ${unread.join(", ")}` : ""),
      );
    },
  };
}
