/**
 * The assertion's literals on the candidate's two screens (before and after the action):
 * how well each is read, on the old screen and the new one, and whether it is new there.
 *
 * The screen text the replay read from the page's DOM (src/browser/screen-text.ts) is read
 * first: it holds what a person reads, exactly — a value typed into a small field, light
 * text on a coloured band. OCR reads what is still missing or not yet new (text drawn in
 * images or on a canvas is not in the DOM): the whole screens as they are, then, only for
 * what the rules still need, both whole screens enlarged.
 *
 * Until rules 6 five passes over the changed regions (tight and wide margins, at one to
 * three times the size) ran between those two. On both calibration ladders (1,045
 * judgements) they asked for about 450 crop readings each and settled one literal between
 * them, and on the demo they were a sixth of the pixels OCR read; so they went.
 */
import sharp from "sharp";
import type { ScreenText } from "../../browser/screen-text.ts";
import { readingFor } from "../../metrics/ocr-cost.ts";
import type { AssertionLiteral } from "../../replay/grounding/description-text.ts";
import { literalSimilarity, OCR_READING_SETTINGS, occurrences, type ScreenReadings } from "./ocr-reading.ts";
import { occurrencesOnScreen, similarityOnScreen } from "./screen-text-match.ts";
import { StageTallies, type StageTally } from "./stage-tallies.ts";

export const CANDIDATE_READING_SETTINGS = Object.freeze({
  /** Enlargement of the whole screens in the last pass. */
  screenScale: 2,
});

export interface LiteralFinding {
  literal: AssertionLiteral;
  /** Best similarity on the new screen (screen text, or a whole-screen reading). */
  after: number;
  /** Best similarity on the old screen, kept for 'was' literals (the last pass reads the old screen only when it matters). */
  before: number;
  /** Read more often on the new screen than on the old one. */
  isNew: boolean;
  /** Whether the page's screen text (not OCR) showed it on the new screen. */
  inScreenText: boolean;
  /** The screen text shows it with other punctuation: no reading may find it there. */
  contradicted: boolean;
}

/** What a literal's finding still asks of OCR, given what the rules need to know of it. */
export type Wanted = (finding: LiteralFinding) => boolean;

const FIRST_STAGE = "screen text and whole-screen OCR";
const LAST_STAGE = `both whole screens ×${CANDIDATE_READING_SETTINGS.screenScale}`;
/** The stages as purposes of OCR readings (ocr-cost.ts). */
const FIRST_PURPOSE = `judge, candidate's screens: ${FIRST_STAGE}`;
const LAST_PURPOSE = `judge, candidate's screens: ${LAST_STAGE}`;

/**
 * What one stage of the reading did over a run: how many judgements reached it, how many
 * screens it asked to read (an enlarged screen counts once, though OCR reads it band by
 * band; each is read once per content and then known), and how many literals it settled
 * (wanted before the stage, no longer after it; a literal the rules never needed found,
 * such as one that should have gone, is never counted). Calibration prints these so each
 * stage is kept only for what it finds for what it costs (rules 6 dropped the region passes so).
 */
export type ReadingStageTally = StageTally<"reached" | "readingsAsked" | "literalsSettled">;

/** This process's tallies, by stage, in the order the stages run. */
const stageTallies = new StageTallies([FIRST_STAGE, LAST_STAGE], ["reached", "readingsAsked", "literalsSettled"]);
/** Literals the rules still wanted after every stage (no stage found them), over this process. */
let unsettledLiterals = 0;

/** The tallies so far: every stage, in the order they run, and the literals no stage settled. */
export function readingStageTallies(): { stages: ReadingStageTally[]; unsettledLiterals: number } {
  return { stages: stageTallies.snapshot(), unsettledLiterals };
}

/**
 * Reads every literal on both screens. `wants` says which findings still need reading on
 * the new screen (not found, or not yet new when newness matters); `wantsGoneChecked`
 * which ones must be looked for as hard as possible because finding them means No.
 */
export async function readCandidateLiterals(options: {
  literals: readonly AssertionLiteral[];
  screens: ScreenReadings;
  /** The new screen (its size frames the enlarged whole-screen reading). */
  after: Buffer;
  beforeText?: ScreenText;
  afterText?: ScreenText;
  wants: Wanted;
  wantsGoneChecked: Wanted;
}): Promise<LiteralFinding[]> {
  const threshold = OCR_READING_SETTINGS.literalSimilarity;
  const settings = CANDIDATE_READING_SETTINGS;
  const { screens, beforeText, afterText } = options;
  const [afterWhole, beforeWhole] = await readingFor(FIRST_PURPOSE, () => Promise.all([screens.afterText(), screens.beforeText()]));
  const findings: LiteralFinding[] = options.literals.map((literal) => {
    const onScreenAfter = afterText ? similarityOnScreen(literal.text, afterText) : { similarity: 0, contradicted: false };
    const onScreenBefore = beforeText ? similarityOnScreen(literal.text, beforeText) : { similarity: 0, contradicted: false };
    const screenTextNew =
      afterText !== undefined && beforeText !== undefined && occurrencesOnScreen(literal.text, afterText) > occurrencesOnScreen(literal.text, beforeText);
    return {
      literal,
      after: onScreenAfter.contradicted ? 0 : Math.max(onScreenAfter.similarity, literalSimilarity(literal.text, afterWhole)),
      before: onScreenBefore.contradicted ? 0 : Math.max(onScreenBefore.similarity, literalSimilarity(literal.text, beforeWhole)),
      isNew: screenTextNew || occurrences(literal.text, afterWhole) > occurrences(literal.text, beforeWhole),
      inScreenText: onScreenAfter.similarity >= threshold,
      contradicted: onScreenAfter.contradicted,
    };
  });
  const stillWanted = () => findings.filter(options.wants).length;
  // Wanted before anything was read: what the rules need of a literal read nowhere yet.
  const wantedAtFirst = findings.filter((finding) => options.wants({ ...finding, after: 0, before: 0, isNew: false, inScreenText: false })).length;
  stageTallies.add(FIRST_STAGE, "reached");
  stageTallies.add(FIRST_STAGE, "readingsAsked", 2);
  stageTallies.add(FIRST_STAGE, "literalsSettled", wantedAtFirst - stillWanted());
  const readInLastPass = (finding: LiteralFinding) => options.wants(finding) || options.wantsGoneChecked(finding);
  if (findings.some(readInLastPass)) {
    const wantedBefore = stillWanted();
    stageTallies.add(LAST_STAGE, "reached");
    // Last pass: both whole screens enlarged and read the same way (small text that did not
    // change, such as a label above a display; a lone digit): new if read more often than before.
    const { width = 0, height = 0 } = await sharp(options.after).metadata();
    const whole = { left: 0, top: 0, width, height };
    const reread = findings.filter((entry) => !entry.contradicted && readInLastPass(entry));
    const afterEnlarged = await readingFor(LAST_PURPOSE, () => screens.region("after", whole, settings.screenScale, "block"));
    // The old screen's enlarged reading decides only whether a literal the new one reads is
    // new, and how well a literal said to have been there before ("was") reads on it: without
    // either it cannot change a verdict or what the evidence records, and it is not read
    // (half the pass's reading; `before` is then left as the first stage read it). When it is
    // needed it is read after the new screen's, not beside it: the saving is CPU, not wall time.
    const beforeMatters = reread.some((finding) => finding.literal.role === "was" || (!finding.isNew && occurrences(finding.literal.text, afterEnlarged) > 0));
    const beforeEnlarged = beforeMatters ? await readingFor(LAST_PURPOSE, () => screens.region("before", whole, settings.screenScale, "block")) : undefined;
    stageTallies.add(LAST_STAGE, "readingsAsked", beforeEnlarged === undefined ? 1 : 2);
    for (const finding of reread) {
      finding.after = Math.max(finding.after, literalSimilarity(finding.literal.text, afterEnlarged));
      if (beforeEnlarged === undefined) continue;
      finding.before = Math.max(finding.before, literalSimilarity(finding.literal.text, beforeEnlarged));
      finding.isNew ||= occurrences(finding.literal.text, afterEnlarged) > occurrences(finding.literal.text, beforeEnlarged);
    }
    stageTallies.add(LAST_STAGE, "literalsSettled", wantedBefore - stillWanted());
  }
  unsettledLiterals += stillWanted();
  return findings;
}
