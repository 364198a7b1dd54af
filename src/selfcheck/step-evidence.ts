/**
 * Did a step's change reproduce the video's change at that point? "The page changed
 * when the video did" is not enough: a page whose buttons only toggle an outline, or
 * that shows the wrong number, changes exactly when the video does. Two kinds of
 * evidence, both indifferent to colours, fonts and small shifts of the layout:
 *
 *   text      the words the video gained over the step (on its after-state, not on its
 *             before-state, nor already on the page before the step) against the words
 *             the page gained (after screenshot against before screenshot). `gain` = share
 *             of the video's new words the page also gained; `stray` = share of the page's
 *             new words the video's after-state does not show at all; `missing` = share of
 *             the video's new words the page's after screenshot does not show at all. OCR
 *             of a compressed video frame misses and invents words, so a stray or missing
 *             share counts only as far as it exceeds the share of the words kept over the
 *             step that the other reading misses.
 *   location  where the screen changed: both pictures cut into cells, a cell changed
 *             when enough of its pixels did (beyond a one-pixel shift: a frame caught
 *             while a scroll settled is the same picture); `overlap` = F1 of the two cell sets, each
 *             side's cells counted as matched when the other side changed within a
 *             couple of cells (a layout moved or scaled a little still overlaps).
 *
 * A step reproduces the video's change unless most numbers it brought are nowhere on the
 * video's after-state (a wrong value); then when it gained every number the video gained
 * and shows nothing the video lacks, or gained most of the words the video gained; not
 * when it shows new words the video lacks, or lacks the video's new words, beyond the
 * readings' noise (and at least `minWordsAgainst` such words, or a number: the pointer
 * drawn over a word makes a frame's reading garble it, and one garbled word looks like
 * one gained, while a number is read exactly); otherwise when it changed where the
 * video did.
 */
import { changedCells, changeOverlap, gainedWords, isNumber, shareFound, wordsOf } from "../metrics/change-evidence.ts";
import type { ImageReading } from "./compare.ts";

/** Thresholds of the decision; see the module comment. */
export const STEP_EVIDENCE_SETTINGS = Object.freeze({ minGain: 0.5, maxStray: 0.5, maxStrayOverNoise: 0.35, minOverlap: 0.3, minWordsAgainst: 2 });

export interface StepEvidence {
  /** Words the video gained over the step (after its fuzzy matches on the before-state are removed). */
  videoNew: readonly string[];
  /** Words the page gained over the step (shared by every evidence of that step: never changed). */
  pageNew: readonly string[];
  /** Share of videoNew the page gained too (undefined when the video gained no word). */
  gain?: number;
  /** Share of pageNew absent from the video's after-state (undefined when the page gained no word). */
  stray?: number;
  /** The same for the numbers among pageNew (exactly: a number is not a slip of another). */
  numberStray?: number;
  /** Share of videoNew absent from the page's after screenshot (undefined when the video gained no word). */
  missing?: number;
  /** How much the two readings disagree on words neither side gained (the larger of the two directions). */
  readingNoise: number;
  /** F1 of the changed cells (undefined when neither side changed a cell). */
  overlap?: number;
  reproduced: boolean;
  /** Which evidence decided. */
  by: "numbers" | "text" | "location" | "none";
}

/** The value kept under `key`, made by `make` the first time it is asked for. */
function cached<K, V>(store: Map<K, V>, key: K, make: () => V): V {
  if (store.has(key)) return store.get(key)!;
  const value = make();
  store.set(key, value);
  return value;
}

/**
 * The evidence for any step and any pair of video states, with each picture's words and
 * each pair's changed cells worked out once: the alignment asks for many pairs.
 */
export class StepEvidenceSource {
  private readonly shotWords: string[][];
  private readonly stateWords: string[][];
  private readonly shotCells = new Map<number, Set<number>>();
  private readonly stateCells = new Map<string, Set<number>>();
  private readonly videoGains = new Map<string, readonly string[]>();
  private readonly pageChanges = new Map<number, { pageNew: readonly string[]; kept: readonly string[] }>();

  constructor(
    private readonly shots: readonly ImageReading[],
    private readonly states: readonly ImageReading[],
  ) {
    this.shotWords = shots.map((shot) => wordsOf(shot.text));
    this.stateWords = states.map((state) => wordsOf(state.text));
  }

  /** Step `step` (screenshot step → step + 1) against the video going from state `from` to state `to`. */
  evidence(step: number, from: number, to: number): StepEvidence {
    const pageBeforeWords = this.shotWords[step] ?? [];
    const videoAfterWords = this.stateWords[to] ?? [];
    // Words the video gains that the page already showed need not be gained again (OCR of a frame can miss a line).
    const videoNew = gainedWords(this.videoGained(from, to), pageBeforeWords);
    const { pageNew, kept } = this.pageChange(step);
    const gain = videoNew.length > 0 ? shareFound(videoNew, pageNew) : undefined;
    // How often the page's words are missing from the video's reading anyway: the words it kept over the step.
    const pageAfterWords = this.shotWords[step + 1] ?? [];
    const absent = (words: readonly string[]) => (words.length === 0 ? undefined : 1 - shareFound(words, videoAfterWords));
    const absentNumbers = (words: readonly string[]) => {
      const numbers = words.filter(isNumber);
      return numbers.length === 0 ? undefined : numbers.filter((number) => !videoAfterWords.includes(number)).length / numbers.length;
    };
    const stray = absent(pageNew);
    const numberStray = absentNumbers(pageNew);
    const keptAbsent = absent(kept) ?? 0;
    // And the other way: how often the video's words the page should show anyway are missing from the page's reading.
    const videoKept = gainedWords(videoAfterWords, videoNew);
    const videoKeptMissing = videoKept.length === 0 ? 0 : 1 - shareFound(videoKept, pageAfterWords);
    const keptNumbersAbsent = absentNumbers(kept) ?? keptAbsent;
    // Missing: the video's new words the page's after screenshot does not show at all (the mirror of stray; a word the
    // video's before-state reading happened to miss is not missing when the page shows it).
    const videoNumbers = videoNew.filter(isNumber);
    const missing = videoNew.length === 0 ? undefined : 1 - shareFound(videoNew, pageAfterWords);
    const overlap = changeOverlap(this.pageCells(step), this.videoCells(from, to));
    const { minGain, maxStray, maxStrayOverNoise, minOverlap, minWordsAgainst } = STEP_EVIDENCE_SETTINGS;
    // Stray beyond what the reading misses of words the page kept: not OCR noise, the page shows what the video does not.
    const strays = (share: number | undefined, noise: number) => share !== undefined && share > maxStray && share - noise > maxStrayOverNoise;
    // Words say No only from enough of them: one word of a frame's reading is as likely a garble as a change. A number is exact.
    const enoughAbsent = (share: number, words: readonly string[]) => Math.round(share * words.length) >= minWordsAgainst || words.some(isNumber);
    const wordsStray = (share: number | undefined, noise: number, words: readonly string[]) =>
      share !== undefined && enoughAbsent(share, words) && strays(share, noise);
    let by: StepEvidence["by"];
    let reproduced: boolean;
    if (strays(numberStray, keptNumbersAbsent)) {
      // Most numbers the step brought are nowhere on the video's screen: a wrong value, whatever else is right.
      [by, reproduced] = ["numbers", false];
    } else if (videoNumbers.length > 0 && videoNumbers.every((number) => pageNew.includes(number)) && !strays(stray, keptAbsent)) {
      // Every number the video brought, read exactly, and nothing the video lacks: a slip of OCR on a word or two
      // (a frame's reading of a small change is two or three words) does not outweigh exact numbers.
      [by, reproduced] = ["numbers", true];
    } else if (gain !== undefined && gain >= minGain) {
      [by, reproduced] = ["text", true];
    } else if (wordsStray(stray, keptAbsent, pageNew) || wordsStray(missing, videoKeptMissing, videoNew)) {
      [by, reproduced] = ["text", false];
    } else {
      [by, reproduced] = [overlap === undefined ? "none" : "location", overlap !== undefined && overlap >= minOverlap];
    }
    return {
      videoNew,
      pageNew,
      readingNoise: Math.max(keptAbsent, videoKeptMissing),
      ...(gain !== undefined ? { gain } : {}),
      ...(stray !== undefined ? { stray } : {}),
      ...(numberStray !== undefined ? { numberStray } : {}),
      ...(missing !== undefined ? { missing } : {}),
      ...(overlap !== undefined ? { overlap } : {}),
      reproduced,
      by,
    };
  }

  /** How much alike the step's change and the video's are, in [0, 1], for the alignment. */
  likeness(step: number, from: number, to: number): number {
    const evidence = this.evidence(step, from, to);
    const parts = [evidence.gain, evidence.overlap].filter((part): part is number => part !== undefined);
    return parts.length === 0 ? 0 : parts.reduce((sum, part) => sum + part, 0) / parts.length;
  }

  /** Words the video gained from state `from` to state `to`. */
  private videoGained(from: number, to: number): readonly string[] {
    return cached(this.videoGains, `${from}:${to}`, () => gainedWords(this.stateWords[to] ?? [], this.stateWords[from] ?? []));
  }

  /** The words step `step` brought to the page, and those it kept. */
  private pageChange(step: number): { pageNew: readonly string[]; kept: readonly string[] } {
    return cached(this.pageChanges, step, () => {
      const pageAfterWords = this.shotWords[step + 1] ?? [];
      const pageNew = gainedWords(pageAfterWords, this.shotWords[step] ?? []);
      return { pageNew, kept: gainedWords(pageAfterWords, pageNew) };
    });
  }

  private pageCells(step: number): Set<number> {
    return cached(this.shotCells, step, () => {
      const [before, after] = [this.shots[step], this.shots[step + 1]];
      return before && after ? changedCells(before, after) : new Set();
    });
  }

  private videoCells(from: number, to: number): Set<number> {
    return cached(this.stateCells, `${from}:${to}`, () => {
      const [before, after] = [this.states[from], this.states[to]];
      return before && after ? changedCells(before, after) : new Set();
    });
  }
}
