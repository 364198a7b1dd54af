/**
 * The offline assertion judge: deterministic, no model; calibration and CI use it. It
 * cannot judge meaning ("the total is correct"); it is a stand-in for the VLM, reported as
 * such.
 *
 * It reads what the assertion names (description-text.ts gives each literal a role from
 * the author's words) on the candidate's screens before and after the action: the page's
 * screen text when the replay read it, and OCR (candidate-reading.ts).
 *
 * When the task recorded the true page's states around every action, the judge first reads
 * what the truth shows there (truth-change.ts) and takes that as the evidence of what the
 * assertion describes, whatever its wording. It says No when
 *
 *   1. the true page changed and the candidate's screen did not, or only scrolled (src/metrics/scroll-shift.ts)
 *      where the true page's change is not a scroll;
 *   2. a literal the true page shows after the action (one that appeared, or was there all
 *      along) is not on the candidate's new screen, or one that went from the true page is
 *      still on it (what "'A' is replaced by B", "A disappears and only B is left", "is no
 *      longer selected" mean is read off the truth, not the phrase);
 *   3. the true page showed something the assertion names as new, and nothing of it is new
 *      on the candidate's screen;
 *   4. the true page changed without showing anything named as new (a selection, a focus, a
 *      colour, an icon, a panel opening): the candidate's change is not of the same kind —
 *      not near the named thing where the truth's was, far smaller than the truth's (by
 *      share of the screen when the truth's change is big, by changed pixels when it is
 *      small: a hover or a focus ring is not a selection), or without any colour the
 *      truth's change brought (black and gray counted as one: change-evidence.ts's colourFamily).
 * Literals the true page itself cannot be read to show ("unread") decide nothing.
 *
 * On both paths, when the replay read the candidate's screen text, its controls must bear
 * out what the assertion says of them (control-claims.ts): a radio, checkbox or option it
 * names as selected (or no longer selected) in that state, and text a Type action typed
 * shown in a field when the assertion puts it in one.
 *
 * Without recorded states (the benchmark's own tasks keep checkpoints only after flagged
 * actions) it falls back to the author's words: a change if the assertion implies one;
 * quoted literals shown ('appears', 'stays'), not shown ('gone'), shown before ('was'); and
 * something named new. Numbers named in prose are read and reported but do not decide
 * presence: OCR misses lone digits on tiles and badges too often.
 *
 * The verdict's reason names which evidence decided (evidence.decidedBy).
 */
import pLimit from "p-limit";
import sharp from "sharp";
import { colourFamily } from "../../metrics/change-evidence.ts";
import { readingFor } from "../../metrics/ocr-cost.ts";
import { MIN_CHANGED_PIXELS } from "../../metrics/pixel-diff.ts";
import { scrollChange } from "../../metrics/scroll-shift.ts";
import { type AssertionLiteral, assertionLiteralList, impliesChange } from "../../replay/grounding/description-text.ts";
import { type LiteralFinding, readCandidateLiterals } from "./candidate-reading.ts";
import { typedTextInField, unmetControlClaims } from "./control-claims.ts";
import { OCR_READING_SETTINGS, ScreenReadings } from "./ocr-reading.ts";
import { boxesOf, near } from "./screen-text-match.ts";
import { CHANGE_READING_SETTINGS, type LiteralFate, readNear, type ScreenChange, screenChange, type TruthChange, truthChangeOnce } from "./truth-change.ts";
import type { AssertionInput, AssertionJudge, AssertionVerdict, HeuristicEvidence } from "./types.ts";

export const HEURISTIC_JUDGE_SETTINGS = Object.freeze({
  /** Fewer changed pixels than this is "nothing happened" (src/metrics/pixel-diff.ts). */
  minChangedPixels: MIN_CHANGED_PIXELS,
  literalSimilarity: OCR_READING_SETTINGS.literalSimilarity,
  /** A truth change this large (share of the screen) is a big one: a panel opening, a picture enlarged. */
  bigChange: 0.05,
  /** A candidate whose change is below this share of the truth's change (by screen share, or by pixels) did not make that change. */
  minExtentRatio: 0.25,
  /**
   * Below this many changed pixels the truth's change is not measured against the
   * candidate's by size: a caret or a one-glyph change is as small as a hover.
   */
  minLocalTruthPixels: 4 * MIN_CHANGED_PIXELS,
  /** A colour counts as brought by the candidate's change at this share of its changed pixels. */
  candidateColourShare: 0.1,
});

/** Steps whose true change `prepare` reads at once (not a judging rule: it changes when, not what, is read). */
const TRUTH_STEPS_AT_ONCE = 3;
/** What OCR reads around the candidate's own change, where the page's text has no box for a literal (ocr-cost.ts). */
const NEAR_CANDIDATE_CHANGE_PURPOSE = "judge, candidate's screens: near its change";

/**
 * Version 2: the true page's change as evidence, and the candidate's screen text beside OCR.
 * Version 3: a small change is measured by size too. Version 4: the candidate's controls
 * (selection and typed values, from its DOM) must bear out what the assertion says of them.
 * Version 5: a changed region's crop is inverted when the crop is dark (it was when the
 * whole screen was), so light text on a dark band of a light page is read. Version 6: the
 * candidate's changed regions are no longer read between the whole screen and the
 * enlarged whole screen (they settled one literal in 1,045 judgements; candidate-reading.ts),
 * so a literal is new on the candidate when it reads more often after the action than
 * before, no longer also when a changed region's crop reads it only after. Version 7: crops
 * are prepared by crop-preparation.ts: stretched from darkest to lightest (sharp's
 * normalise wrapped an off-white band round to black) and every dark area inverted, a
 * banner or button of a light page too. Version 8: a literal is new on the true page only when
 * its new screen reads it more often than its old screen shows anything like it, garbled
 * copies included (truth-change.ts), so OCR that garbles one of two copies on the old screen
 * no longer makes the other look new.
 */
export const HEURISTIC_RULES_VERSION = "8";

export { impliesChange };

type Decided = NonNullable<HeuristicEvidence["decidedBy"]>;

const round = (value: number) => Math.round(value * 1000) / 1000;
const quoted = (literals: readonly { literal: AssertionLiteral }[]) => literals.map((entry) => `'${entry.literal.text}'`).join(", ");

export function createHeuristicJudge(): AssertionJudge {
  const settings = HEURISTIC_JUDGE_SETTINGS;
  const threshold = settings.literalSimilarity;

  return {
    kind: "heuristic",
    promptHashes: {},
    rulesVersion: HEURISTIC_RULES_VERSION,
    async prepare(steps, stop) {
      // In step order, a few at a time: each holds its two screens decoded until its crops are read.
      const limit = pLimit(TRUTH_STEPS_AT_ONCE);
      const read = (step: (typeof steps)[number]) =>
        truthChangeOnce(assertionLiteralList(step.assertion), new ScreenReadings(step.truth.before, step.truth.after), step.truth);
      await Promise.all(steps.map((step) => limit(async () => (stop.aborted ? undefined : read(step).catch(() => undefined)))));
    },
    async judge(input: AssertionInput): Promise<AssertionVerdict> {
      const started = Date.now();
      const change = impliesChange(input.assertion);
      const literals = assertionLiteralList(input.assertion);
      const candidate = await screenChange(input.before, input.after);
      const truth = input.truth ? await truthChangeOnce(literals, new ScreenReadings(input.truth.before, input.truth.after), input.truth) : undefined;
      const evidence: HeuristicEvidence = {
        impliesChange: change,
        changedPixels: candidate.changedPixels,
        changedFraction: Math.round(candidate.changedFraction * 1e6) / 1e6,
        literals: [],
        screenText: input.afterText !== undefined,
        ...(truth
          ? {
              truth: {
                changedPixels: truth.changedPixels,
                changedFraction: Math.round(truth.changedFraction * 1e6) / 1e6,
                colours: truth.colours,
                literals: truth.literals.map((entry) => ({ literal: entry.literal.text, fate: entry.fate, nearChange: entry.nearChange })),
              },
              candidateColours: candidate.colours,
            }
          : {}),
      };
      const verdict = (result: "Yes" | "No", decidedBy: Decided, think: string): AssertionVerdict => {
        evidence.decidedBy = decidedBy;
        return { result, think, replies: [], attempts: 1, evidence, latencyMs: Date.now() - started };
      };
      return truth
        ? judgeWithTruth(input, literals, candidate, truth, verdict, evidence)
        : judgeFromWords(input, literals, change, candidate, verdict, evidence);
    },
  };

  /** The author's words alone (no recorded states): see the module comment. */
  async function judgeFromWords(
    input: AssertionInput,
    literals: AssertionLiteral[],
    change: boolean,
    candidate: ScreenChange,
    verdict: (result: "Yes" | "No", decidedBy: Decided, think: string) => AssertionVerdict,
    evidence: HeuristicEvidence,
  ): Promise<AssertionVerdict> {
    if (change && candidate.changedPixels < settings.minChangedPixels) {
      return verdict("No", "change", `the assertion implies a change but only ${candidate.changedPixels} pixels changed`);
    }
    const controls = controlsProblem(input);
    if (controls) return verdict("No", "controls", controls);
    if (literals.length === 0) return verdict("Yes", "change", `screen changed by ${candidate.changedPixels} pixels; the assertion names no text to read`);
    const screens = new ScreenReadings(input.before, input.after);
    const findings = await readCandidateLiterals({
      ...candidateSources(input, literals, screens),
      wants: (finding) =>
        finding.literal.role !== "was" &&
        finding.literal.role !== "gone" &&
        (finding.after < threshold || (!finding.isNew && finding.literal.role === "appears")),
      wantsGoneChecked: (finding) => finding.literal.role === "gone" && finding.after < threshold,
    });
    recordFindings(evidence, findings, (finding) => (finding.literal.role === "was" ? finding.before >= threshold : finding.after >= threshold));
    evidence.ocrText = (await screens.afterTexts()).join(" | ");

    const problems: string[] = [];
    for (const finding of findings.filter((entry) => entry.literal.decisive)) {
      const { text, role } = finding.literal;
      if ((role === "appears" || role === "stays") && finding.after < threshold)
        problems.push(`'${text}' is not on the new screen (best match ${round(finding.after)})`);
      if (role === "gone" && finding.after >= threshold) problems.push(`'${text}' should have gone but is still on the screen`);
      if (role === "was" && finding.before < threshold)
        problems.push(`'${text}' was not on the screen before the action (best match ${round(finding.before)})`);
    }
    if (problems.length > 0) return verdict("No", "literals", problems.join("; "));

    // Newness: among what should appear (quoted, or prose numbers that were read at all), something must be new.
    const candidates = findings.filter((finding) => finding.literal.role === "appears" && (finding.literal.decisive || finding.after >= threshold));
    if (change && candidates.length > 0 && !candidates.some((finding) => finding.isNew)) {
      return verdict("No", "newness", `nothing the assertion names is new on the screen: ${quoted(candidates)} read before the action too`);
    }
    const read = findings.filter((finding) => finding.literal.decisive && finding.literal.role !== "gone");
    const unread = findings.filter((finding) => !finding.literal.decisive && finding.after < threshold).map((finding) => finding.literal.text);
    return verdict(
      "Yes",
      read.length > 0 ? "literals" : "change",
      `screen changed by ${candidate.changedPixels} pixels; read ${quoted(read) || "no quoted text (none named)"}` +
        (unread.length > 0 ? `; not read (not decisive): ${unread.join(", ")}` : ""),
    );
  }

  /** With the true page's states: its change is the evidence (see the module comment). */
  async function judgeWithTruth(
    input: AssertionInput,
    literals: AssertionLiteral[],
    candidate: ScreenChange,
    truth: TruthChange,
    verdict: (result: "Yes" | "No", decidedBy: Decided, think: string) => AssertionVerdict,
    evidence: HeuristicEvidence,
  ): Promise<AssertionVerdict> {
    const fateOf = new Map<AssertionLiteral, LiteralFate>(truth.literals.map((entry) => [entry.literal, entry.fate]));
    // 1. The truth changed here: so must the candidate.
    if (truth.changed && !candidate.changed) {
      return verdict("No", "change", `the true page changed here (${truth.changedPixels} pixels); the candidate's screen did not (${candidate.changedPixels})`);
    }
    // A screen that only scrolled shows nothing new of the page: where the true page's content changed (beyond any scroll of its own), that is no change.
    const states = input.truth;
    if (states && truth.changed && candidate.changedFraction >= settings.bigChange) {
      const scrolled = await scrollChange(input.before, input.after);
      if (scrolled && scrolled.residualPixels < settings.minChangedPixels) {
        const truthScroll = await scrollChange(states.before, states.after);
        const truthContentChange = truthScroll ? truthScroll.residualPixels : truth.changedPixels;
        if (truthContentChange >= settings.minLocalTruthPixels) {
          return verdict(
            "No",
            "change",
            `the candidate's screen only scrolled (by ${scrolled.shift} pixels); ` +
              `on the true page ${truthContentChange} pixels of content changed beyond any scroll`,
          );
        }
      }
    }
    const controls = controlsProblem(input);
    if (controls) return verdict("No", "controls", controls);
    const shown = (fate: LiteralFate | undefined) => fate === "appeared" || fate === "kept";
    const screens = new ScreenReadings(input.before, input.after);
    const findings = await readCandidateLiterals({
      ...candidateSources(input, literals, screens),
      wants: (finding) => {
        const fate = fateOf.get(finding.literal);
        return (shown(fate) && finding.after < threshold) || (fate === "appeared" && !finding.isNew);
      },
      wantsGoneChecked: (finding) => fateOf.get(finding.literal) === "went" && finding.after < threshold,
    });
    recordFindings(evidence, findings, (finding) => finding.after >= threshold);
    evidence.ocrText = (await screens.afterTexts()).join(" | ");

    // 2. Each literal's fate on the truth, checked on the candidate's new screen.
    const problems: string[] = [];
    for (const finding of findings) {
      const fate = fateOf.get(finding.literal);
      const { text } = finding.literal;
      // Prose numbers decide presence only where OCR could read them on the truth and the candidate's screen text exists.
      const decides = finding.literal.decisive || input.afterText !== undefined;
      if (decides && shown(fate) && finding.after < threshold) {
        problems.push(
          `'${text}' ${fate === "appeared" ? "appears on" : "stays on"} the true page; ` +
            `the candidate's new screen does not show it (best match ${round(finding.after)})`,
        );
      }
      if (decides && fate === "went" && finding.after >= threshold)
        problems.push(`'${text}' goes from the true page; the candidate's new screen still shows it`);
    }
    if (problems.length > 0) return verdict("No", "literals", problems.join("; "));

    // 3. What the truth shows as new, the candidate must show as new (one of it is enough).
    const appeared = findings.filter((finding) => fateOf.get(finding.literal) === "appeared");
    if (appeared.length > 0) {
      if (!appeared.some((finding) => finding.isNew)) {
        return verdict("No", "newness", `the true page shows ${quoted(appeared)} new; nothing of it is new on the candidate's screen`);
      }
      return verdict("Yes", "newness", `as on the true page, ${quoted(appeared.filter((finding) => finding.isNew))} new on the candidate's screen`);
    }
    if (!truth.changed) {
      return verdict("Yes", "change", `the true page did not change here (${truth.changedPixels} pixels); the candidate shows what the assertion names`);
    }

    // 4. A change without new named text: the candidate's must be of the same kind.
    const anchors = truth.literals.filter((entry) => entry.nearChange).map((entry) => entry.literal);
    if (anchors.length > 0) {
      const size = await sizeOf(input.after);
      let found: AssertionLiteral | undefined;
      for (const literal of anchors) {
        if (await candidateChangedNear(literal, input, candidate, screens, size)) {
          found = literal;
          break;
        }
      }
      if (!found) {
        return verdict(
          "No",
          "location",
          `on the true page the change is at ${anchors.map((literal) => `'${literal.text}'`).join(", ")} (nothing named is new); ` +
            "the candidate's screen changed elsewhere",
        );
      }
      evidence.anchor = found.text;
    }
    if (truth.changedFraction >= settings.bigChange && candidate.changedFraction < settings.minExtentRatio * truth.changedFraction) {
      return verdict("No", "extent", `the true page changed ${pct(truth.changedFraction)} of the screen; the candidate only ${pct(candidate.changedFraction)}`);
    }
    // A small change too has its size: a hover or a focus ring next to the control is not the selection or mark the truth shows.
    if (truth.changedPixels >= settings.minLocalTruthPixels && candidate.changedPixels < settings.minExtentRatio * truth.changedPixels) {
      return verdict(
        "No",
        "extent",
        `the true page's change covers ${truth.changedPixels} pixels; ` +
          `the candidate's only ${candidate.changedPixels} (a lesser change: a hover or a focus ring)`,
      );
    }
    if (truth.colours.length > 0) {
      const brought = new Set(candidate.colours.map(colourFamily));
      if (!truth.colours.some((colour) => brought.has(colourFamily(colour)))) {
        return verdict(
          "No",
          "colour",
          `the true page's change brought ${truth.colours.join(", ")}; the candidate's brought ${candidate.colours.join(", ") || "no colour"}`,
        );
      }
    }
    const how = [
      evidence.anchor ? `near '${evidence.anchor}'` : undefined,
      `${pct(candidate.changedFraction)} of the screen (true page ${pct(truth.changedFraction)})`,
      truth.colours.length > 0
        ? `bringing ${candidate.colours.filter((colour) => truth.colours.some((other) => colourFamily(other) === colourFamily(colour))).join(", ")}`
        : undefined,
    ].filter(Boolean);
    return verdict("Yes", evidence.anchor ? "location" : truth.colours.length > 0 ? "colour" : "extent", `changed as the true page did: ${how.join(", ")}`);
  }

  /** Whether the candidate's screen changed near where it shows `literal`: its screen text's boxes, else OCR around each change. */
  async function candidateChangedNear(
    literal: AssertionLiteral,
    input: AssertionInput,
    candidate: ScreenChange,
    screens: ScreenReadings,
    size: { width: number; height: number },
  ): Promise<boolean> {
    const reach = CHANGE_READING_SETTINGS.nearReach;
    const boxes = [...(input.afterText ? boxesOf(literal.text, input.afterText) : []), ...(input.beforeText ? boxesOf(literal.text, input.beforeText) : [])];
    // Where the page's text says the named thing is, that decides; OCR around each change only for text the DOM does not hold.
    if (boxes.length > 0) return boxes.some((box) => candidate.regions.some((region) => near(box, region, reach)));
    return readingFor(
      NEAR_CANDIDATE_CHANGE_PURPOSE,
      async () =>
        (await readNear(literal.text, screens, "after", candidate.regions, size)) || readNear(literal.text, screens, "before", candidate.regions, size),
    );
  }
}

/**
 * What the candidate's controls deny of the assertion (control-claims.ts): a named radio,
 * checkbox or option not in the state the assertion gives it, or typed text the assertion
 * puts in a field that no field shows. Only with the candidate's screen text.
 */
function controlsProblem(input: AssertionInput): string | undefined {
  const screen = input.afterText;
  if (!screen) return undefined;
  const problems = unmetControlClaims(input.assertion, screen, input.beforeText).map((claim) => {
    const state = claim.selected ? "selected" : "not selected";
    return claim.how === "state"
      ? `the assertion has '${claim.named}' ${state}; the candidate's control of that name is not`
      : `the assertion has '${claim.named}' newly ${state}; the candidate's control was ${state} before the action already`;
  });
  if (typedTextInField({ assertion: input.assertion, typed: input.typedText, screen }) === false) {
    problems.push(`'${input.typedText}' was typed and the assertion puts it in a field; no field on the candidate's new screen shows it`);
  }
  return problems.length > 0 ? problems.join("; ") : undefined;
}

/** What the candidate's literals are read from: its two screenshots, their OCR, and the page's screen text when the replay read it. */
function candidateSources(input: AssertionInput, literals: AssertionLiteral[], screens: ScreenReadings) {
  return {
    literals,
    screens,
    after: input.after,
    ...(input.beforeText ? { beforeText: input.beforeText } : {}),
    ...(input.afterText ? { afterText: input.afterText } : {}),
  };
}

function recordFindings(evidence: HeuristicEvidence, findings: readonly LiteralFinding[], found: (finding: LiteralFinding) => boolean): void {
  evidence.literals = findings.map((finding) => ({
    literal: finding.literal.text,
    role: finding.literal.role,
    found: found(finding),
    similarity: round(finding.literal.role === "was" ? finding.before : finding.after),
    isNew: finding.isNew,
    decisive: finding.literal.decisive,
    ...(finding.inScreenText ? { inScreenText: true } : {}),
  }));
}

async function sizeOf(png: Buffer): Promise<{ width: number; height: number }> {
  const { width = 0, height = 0 } = await sharp(png).metadata();
  return { width, height };
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}
