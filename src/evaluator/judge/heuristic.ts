/**
 * The offline assertion judge. It reads what the assertion names (description-text.ts:
 * assertionLiteralList gives each literal a role) on the screenshots before and after
 * the action, with OCR, and says Yes when
 *
 *   1. the screen changed visibly, if the assertion implies a change;
 *   2. every quoted literal that should be shown is read on the new screen (digits in it
 *      exactly: '$94.49' is not '$94.48'), one that went away ('gone') is not read on it,
 *      and one the page showed before ('was') is read on the old screen;
 *   3. something the assertion names is new: at least one literal it expects to appear is
 *      read where the screen changed and was not read there before (or is read more often
 *      than before). A page that only repaints the clicked button, or swallows a move
 *      while the same text stays on screen, fails here. Literals the assertion says stay,
 *      and numbers in prose that OCR could not read at all, ask for no newness.
 *
 * Numbers named in prose ("Moves shows 3") are read and reported but do not decide rule 2:
 * Tesseract misses lone digits on tiles and badges too often. Deterministic, no model;
 * calibration and CI use it. It cannot judge meaning ("the total is correct"); it is a
 * stand-in for the VLM, reported as such.
 *
 * OCR runs in passes: the whole screens (the texts the OCR metric reads, cached), then
 * each region that changed, cut out of both screens, contrast-stretched, inverted when
 * dark and enlarged — where small or light-on-dark UI text (a cart badge, a calculator
 * display) is read far more reliably — and last the whole new screen enlarged.
 */

import { distance } from "fastest-levenshtein";
import sharp from "sharp";
import { readImageText } from "../../metrics/ocr.ts";
import { changedRegions, MIN_CHANGED_PIXELS, pixelDiff, type Region } from "../../metrics/pixel-diff.ts";
import { type AssertionLiteral, assertionLiteralList, impliesChange, normalizeText } from "../../replay/grounding/description-text.ts";
import type { AssertionInput, AssertionJudge, AssertionVerdict, HeuristicEvidence } from "./types.ts";

export const HEURISTIC_JUDGE_SETTINGS = Object.freeze({
  /** Fewer changed pixels than this is "nothing happened" (src/metrics/pixel-diff.ts). */
  minChangedPixels: MIN_CHANGED_PIXELS,
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
    // Tight first: a crop holding just the changed text, without half of a big digit beside it.
    Object.freeze({ padding: 4, scale: 3 }),
    Object.freeze({ padding: 16, scale: 2 }),
    Object.freeze({ padding: 40, scale: 1 }),
    Object.freeze({ padding: 40, scale: 2 }),
    Object.freeze({ padding: 16, scale: 1 }),
  ]),
  /** The largest side an enlarged crop may reach. */
  regionMaxSide: 2400,
  /** Enlargement of the whole screen in the last pass. */
  screenScale: 2,
  /**
   * Regions up to this tall (screen pixels) are read as one block of text (Tesseract's
   * automatic page mode reads nothing from a lone digit or word); taller ones in bands of
   * this height, each prepared on its own, so light text on a dark band is inverted and read.
   */
  bandHeight: 200,
});

export { impliesChange };

/** What OCR may read for an operator sign: × as x or *, − as a dash of any kind, ÷ as + or /. */
const SIGN_READINGS: Record<string, string> = {
  "×": "[x×*✕]",
  "*": "[x×*✕]",
  x: "[x×*✕]",
  "−": "[-−–—~_]",
  "-": "[-−–—~_]",
  "–": "[-−–—~_]",
  "—": "[-−–—~_]",
  "÷": "[÷+/:=]",
  "/": "[/÷|]",
  "+": "[+÷]",
  "=": "[=]",
};
const GAP = "[^\\p{L}\\p{N}]*";

/**
 * For a literal made of numbers and signs ('$9,873', '1 / 8', '12 ×', '56 ÷ 0 = error'
 * is not one: it has a word), a pattern for its reading in OCR text: the digit groups in
 * order, each operator sign where it stands (so '12 ×' is not just '12'), other
 * punctuation free; OCR often glues a number to the next word ("1items"), so only other
 * digits may not touch it. Undefined for literals with letters.
 */
function numberPattern(literal: string): RegExp | undefined {
  if (!/^\d+( \d+)*$/.test(normalizeText(literal))) return undefined;
  const tokens = literal.trim().match(/\d+|[×*x−\-–—÷/+=]|[^\d×*x−\-–—÷/+=]+/gu) ?? [];
  let source = "";
  let pendingGap = false;
  for (const token of tokens) {
    if (/^\d+$/.test(token)) {
      source += `${pendingGap || source ? GAP : ""}${token}`;
      pendingGap = false;
    } else if (SIGN_READINGS[token]) {
      source += `${GAP}${SIGN_READINGS[token]}`;
      pendingGap = true;
    } else {
      pendingGap = pendingGap || source !== "";
    }
  }
  return new RegExp(`(?<!\\p{N})${source}(?!\\p{N})`, "gu");
}

/** Best similarity of `literal` to any run of OCR words of about its length (1 = read exactly). */
export function literalSimilarity(literal: string, ocrText: string): number {
  const wanted = normalizeText(literal);
  const text = normalizeText(ocrText);
  if (!wanted) return 1;
  const numbers = numberPattern(literal);
  if (numbers) return numbers.test(ocrText.toLowerCase()) ? 1 : 0;
  if (` ${text} `.includes(` ${wanted} `)) return 1;
  if (wanted.length < HEURISTIC_JUDGE_SETTINGS.exactBelowChars) return 0;
  const ocrWords = text ? text.split(" ") : [];
  const span = wanted.split(" ").length;
  // Letters may be misread, digits may not: a window counts only with the literal's digits, in order.
  const digitsOf = (value: string) => value.replace(/\D/g, "");
  const wantedDigits = digitsOf(wanted);
  let best = 0;
  for (let length = Math.max(1, span - 1); length <= span + 1; length++) {
    for (let start = 0; start + length <= ocrWords.length; start++) {
      const window = ocrWords.slice(start, start + length).join(" ");
      if (digitsOf(window) !== wantedDigits) continue;
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

/**
 * A region's text: one block when it is short, else band by band (see
 * HEURISTIC_JUDGE_SETTINGS.bandHeight), each band read as a page or, for the last pass
 * over a whole screen, as a block (which also reads a lone display digit or a faint line).
 */
async function readRegion(png: Buffer, region: Region, scale: number, bandLayout: "page" | "block" = "page"): Promise<string> {
  const band = HEURISTIC_JUDGE_SETTINGS.bandHeight;
  if (region.height <= band) return readImageText(await regionForOcr(png, region, scale), { layout: "block" });
  const overlap = 24;
  const texts: string[] = [];
  for (let top = region.top; top < region.top + region.height - overlap; top += band - overlap) {
    const height = Math.min(band, region.top + region.height - top);
    texts.push(await readImageText(await regionForOcr(png, { left: region.left, top, width: region.width, height }, scale), { layout: bandLayout }));
  }
  return texts.join(" ");
}

/** How many times a literal reads in a text (non-overlapping windows at or above the threshold). */
function occurrences(literal: string, text: string): number {
  if (literalSimilarity(literal, text) < HEURISTIC_JUDGE_SETTINGS.literalSimilarity) return 0;
  const numbers = numberPattern(literal);
  if (numbers) return (text.toLowerCase().match(numbers) ?? []).length;
  const wanted = normalizeText(literal);
  const normalized = ` ${normalizeText(text)} `;
  if (wanted && normalized.includes(` ${wanted} `)) return normalized.split(` ${wanted} `).length - 1;
  return 1;
}

/** Lazily read OCR texts of the two screens: whole, and per changed region. */
class ScreenReadings {
  private readonly regionTexts = new Map<string, Promise<string>>();
  constructor(
    private readonly before: Buffer,
    private readonly after: Buffer,
  ) {}
  readonly afterText = () => readImageText(this.after);
  readonly beforeText = () => readImageText(this.before);
  /** The text of a region on one screen, prepared and enlarged; each read once. */
  region(which: "before" | "after", region: Region, scale: number, bandLayout: "page" | "block" = "page"): Promise<string> {
    const key = `${which}:${region.left},${region.top},${region.width},${region.height}@${scale}:${bandLayout}`;
    let text = this.regionTexts.get(key);
    if (!text) {
      text = readRegion(which === "before" ? this.before : this.after, region, scale, bandLayout);
      this.regionTexts.set(key, text);
    }
    return text;
  }
  /** Every text read so far of the new screen, for the record. */
  async afterTexts(): Promise<string[]> {
    const regional = await Promise.all([...this.regionTexts.entries()].filter(([key]) => key.startsWith("after:")).map(([, text]) => text));
    return [await this.afterText(), ...regional];
  }
}

interface LiteralFinding {
  literal: AssertionLiteral;
  /** Best similarity on the new screen (whole or any region reading). */
  after: number;
  /** Best similarity on the old screen, whole (for 'was'). */
  before: number;
  /** Read where the screen changed and not there before, or read more often than before. */
  isNew: boolean;
}

export function createHeuristicJudge(): AssertionJudge {
  const settings = HEURISTIC_JUDGE_SETTINGS;
  const threshold = settings.literalSimilarity;

  /** Reads every literal on both screens, as far as the rules need. */
  async function readLiterals(literals: readonly AssertionLiteral[], screens: ScreenReadings, input: AssertionInput): Promise<LiteralFinding[]> {
    const [afterWhole, beforeWhole] = await Promise.all([screens.afterText(), screens.beforeText()]);
    const findings: LiteralFinding[] = literals.map((literal) => ({
      literal,
      after: literalSimilarity(literal.text, afterWhole),
      before: literalSimilarity(literal.text, beforeWhole),
      isNew: occurrences(literal.text, afterWhole) > occurrences(literal.text, beforeWhole),
    }));
    const wantsReading = (finding: LiteralFinding) =>
      finding.literal.role !== "was" &&
      finding.literal.role !== "gone" &&
      (finding.after < threshold || (!finding.isNew && finding.literal.role === "appears"));
    // Changed regions, tight and with a wider margin (a label beside a changed number), at two sizes.
    for (const { padding, scale } of settings.regionReadings) {
      if (!findings.some(wantsReading)) break;
      for (const region of await changedRegions(input.before, input.after, { max: settings.maxRegions, padding })) {
        const pending = findings.filter(wantsReading);
        if (pending.length === 0) break;
        const afterRegion = await screens.region("after", region, scale);
        for (const finding of pending) {
          const similarity = literalSimilarity(finding.literal.text, afterRegion);
          finding.after = Math.max(finding.after, similarity);
          if (similarity >= threshold && !finding.isNew) {
            finding.isNew = literalSimilarity(finding.literal.text, await screens.region("before", region, scale)) < threshold;
          }
        }
      }
    }
    // What should have gone is looked for as hard as what should be there: not read on the
    // whole screen is not yet gone (small button labels need the enlarged reading).
    const unconfirmedGone = (finding: LiteralFinding) => finding.literal.role === "gone" && finding.after < threshold;
    if (findings.some((finding) => wantsReading(finding) || unconfirmedGone(finding))) {
      // Last pass: both whole screens enlarged and read the same way (small text that did not
      // change, such as a label above a display; a lone digit): new if read more often than before.
      const { width = 0, height = 0 } = await sharp(input.after).metadata();
      const whole = { left: 0, top: 0, width, height };
      const [afterEnlarged, beforeEnlarged] = await Promise.all([
        screens.region("after", whole, settings.screenScale, "block"),
        screens.region("before", whole, settings.screenScale, "block"),
      ]);
      for (const finding of findings.filter((entry) => wantsReading(entry) || unconfirmedGone(entry))) {
        finding.after = Math.max(finding.after, literalSimilarity(finding.literal.text, afterEnlarged));
        finding.isNew ||= occurrences(finding.literal.text, afterEnlarged) > occurrences(finding.literal.text, beforeEnlarged);
      }
    }
    return findings;
  }

  return {
    kind: "heuristic",
    promptHashes: {},
    async judge(input: AssertionInput): Promise<AssertionVerdict> {
      const started = Date.now();
      const change = impliesChange(input.assertion);
      const diff = await pixelDiff(input.before, input.after);
      const literals = assertionLiteralList(input.assertion);
      const evidence: HeuristicEvidence = {
        impliesChange: change,
        changedPixels: diff.changedPixels,
        changedFraction: Math.round(diff.changedFraction * 1e6) / 1e6,
        literals: [],
      };
      const verdict = (result: "Yes" | "No", think: string): AssertionVerdict => ({
        result,
        think,
        replies: [],
        attempts: 1,
        evidence,
        latencyMs: Date.now() - started,
      });
      if (change && diff.changedPixels < settings.minChangedPixels) {
        return verdict("No", `the assertion implies a change but only ${diff.changedPixels} pixels changed`);
      }
      if (literals.length === 0) return verdict("Yes", `screen changed by ${diff.changedPixels} pixels; the assertion names no text to read`);

      const screens = new ScreenReadings(input.before, input.after);
      const findings = await readLiterals(literals, screens, input);
      evidence.ocrText = (await screens.afterTexts()).join(" | ");
      const round = (value: number) => Math.round(value * 1000) / 1000;
      evidence.literals = findings.map((finding) => ({
        literal: finding.literal.text,
        role: finding.literal.role,
        found: finding.literal.role === "was" ? finding.before >= threshold : finding.after >= threshold,
        similarity: round(finding.literal.role === "was" ? finding.before : finding.after),
        isNew: finding.isNew,
        decisive: finding.literal.decisive,
      }));

      const problems: string[] = [];
      for (const finding of findings.filter((entry) => entry.literal.decisive)) {
        const { text, role } = finding.literal;
        if ((role === "appears" || role === "stays") && finding.after < threshold)
          problems.push(`'${text}' is not on the new screen (best OCR match ${round(finding.after)})`);
        if (role === "gone" && finding.after >= threshold) problems.push(`'${text}' should have gone but is still on the screen`);
        if (role === "was" && finding.before < threshold)
          problems.push(`'${text}' was not on the screen before the action (best OCR match ${round(finding.before)})`);
      }
      if (problems.length > 0) return verdict("No", problems.join("; "));

      // Newness: among what should appear (quoted, or prose numbers that were read at all), something must be new.
      const candidates = findings.filter((finding) => finding.literal.role === "appears" && (finding.literal.decisive || finding.after >= threshold));
      if (change && candidates.length > 0 && !candidates.some((finding) => finding.isNew)) {
        return verdict(
          "No",
          `nothing the assertion names is new on the screen: ${candidates.map((finding) => `'${finding.literal.text}'`).join(", ")} read before the action too`,
        );
      }
      const read = findings.filter((finding) => finding.literal.decisive && finding.literal.role !== "gone").map((finding) => `'${finding.literal.text}'`);
      const unread = findings.filter((finding) => !finding.literal.decisive && finding.after < threshold).map((finding) => finding.literal.text);
      return verdict(
        "Yes",
        `screen changed by ${diff.changedPixels} pixels; read ${read.join(", ") || "no quoted text (none named)"}` +
          (unread.length > 0 ? `; not read (not decisive): ${unread.join(", ")}` : ""),
      );
    },
  };
}
