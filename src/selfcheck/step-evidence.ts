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
 *             when enough of its pixels did; `overlap` = F1 of the two cell sets, each
 *             side's cells counted as matched when the other side changed within a
 *             couple of cells (a layout moved or scaled a little still overlaps).
 *
 * A step reproduces the video's change unless most numbers it brought are nowhere on the
 * video's after-state (a wrong value); then when it gained every number the video gained
 * and shows nothing the video lacks, or gained most of the words the video gained; not
 * when it shows new words the video lacks, or lacks the video's new words, beyond the
 * readings' noise; otherwise when it changed where the video did.
 */
import type { ImageReading } from "./compare.ts";

/** Grid over the 640 × 360 grey pictures: 32 × 18 cells of 20 px (40 px of the screen). */
const CELL = 20;
const PIXEL_TOLERANCE = 24;
/** A cell changed when this many of its 400 pixels did (a caret or antialiasing noise stays below). */
const CELL_CHANGED_PIXELS = 6;
/** How far apart (in cells) two changes may be and still be the same change. */
const CELL_SLACK = 2;
/** Thresholds of the decision; see the module comment. */
export const STEP_EVIDENCE_SETTINGS = Object.freeze({ minGain: 0.5, maxStray: 0.5, maxStrayOverNoise: 0.35, minOverlap: 0.3 });

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

/**
 * Lower-cased words of four or more letters, and numbers; OCR punctuation dropped.
 * Shorter letter runs are left out: on a video frame they are mostly OCR's readings of
 * icons, borders and compression noise ("pat", "tha"), and a change worth checking
 * rarely shows only short words.
 */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/\p{L}{4,}|\p{N}+(?:[.,:]\p{N}+)*/gu) ?? []).map((word) => word.replace(/,/g, ""));
}

/**
 * Whether two strings are at most one edit apart (Levenshtein distance ≤ 1, in UTF-16
 * code units), in one pass: the alignment asks this of every pair of words on two screens
 * many times over, where a full edit-distance table per pair was most of a self-check's time.
 */
function withinOneEdit(a: string, b: string): boolean {
  const lengthGap = a.length - b.length;
  if (lengthGap > 1 || lengthGap < -1) return false;
  const shorter = Math.min(a.length, b.length);
  let i = 0;
  while (i < shorter && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === shorter) return true;
  if (lengthGap === 0) return a.slice(i + 1) === b.slice(i + 1);
  return lengthGap > 0 ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

const isNumber = (word: string) => /\d/.test(word);

/**
 * The same word as read by OCR from two pictures: numbers exactly; words with one slip
 * allowed, or one inside the other (OCR of a frame glues neighbours: "expandall").
 */
export function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  if (isNumber(a) || isNumber(b)) return false;
  return withinOneEdit(a, b) || a.includes(b) || b.includes(a);
}

/**
 * Words of `after` not matched one-to-one by words of `before` (a multiset difference up
 * to OCR slips). Each word of `after`, in order, takes the first untaken equal word of
 * `before`, else the first untaken one it is the same word as (sameWord).
 */
export function gainedWords(after: readonly string[], before: readonly string[]): string[] {
  const taken = new Uint8Array(before.length);
  // Where each word stands in `before`, in order, and how many of those places are known taken.
  const places = new Map<string, { at: number[]; next: number }>();
  before.forEach((word, index) => {
    const entry = places.get(word);
    if (entry) entry.at.push(index);
    else places.set(word, { at: [index], next: 0 });
  });
  const firstEqual = (word: string): number => {
    const entry = places.get(word);
    if (!entry) return -1;
    while (entry.next < entry.at.length && taken[entry.at[entry.next]!]) entry.next += 1;
    return entry.next < entry.at.length ? entry.at[entry.next]! : -1;
  };
  const firstAlike = (word: string): number => {
    // A number is only the same word as itself, which firstEqual looked for.
    if (isNumber(word)) return -1;
    for (let index = 0; index < before.length; index++) if (!taken[index] && sameWord(word, before[index]!)) return index;
    return -1;
  };
  const gained: string[] = [];
  for (const word of after) {
    const equal = firstEqual(word);
    const match = equal >= 0 ? equal : firstAlike(word);
    if (match >= 0) taken[match] = 1;
    else gained.push(word);
  }
  return gained;
}

/** Share of `words` that `among` shows too (up to OCR slips); equal words are looked up, not compared one by one. */
function shareFound(words: readonly string[], among: readonly string[]): number {
  if (words.length === 0) return 0;
  const exact = new Set(among);
  const found = words.filter((word) => exact.has(word) || (!isNumber(word) && among.some((other) => sameWord(word, other))));
  return found.length / words.length;
}

/** Indices of the grid cells where two grey pictures (same size) differ. */
export function changedCells(a: Buffer, b: Buffer, width = 640): Set<number> {
  const cells = new Set<number>();
  if (a.length !== b.length || a.length === 0) return cells;
  const height = a.length / width;
  const columns = Math.ceil(width / CELL);
  const counts = new Map<number, number>();
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (Math.abs(a[i]! - b[i]!) <= PIXEL_TOLERANCE) continue;
      const cell = Math.floor(y / CELL) * columns + Math.floor(x / CELL);
      const count = (counts.get(cell) ?? 0) + 1;
      counts.set(cell, count);
      if (count >= CELL_CHANGED_PIXELS) cells.add(cell);
    }
  }
  return cells;
}

function nearAny(cell: number, others: ReadonlySet<number>, columns: number): boolean {
  const row = Math.floor(cell / columns);
  const column = cell % columns;
  for (let dy = -CELL_SLACK; dy <= CELL_SLACK; dy++) {
    for (let dx = -CELL_SLACK; dx <= CELL_SLACK; dx++) {
      const c = column + dx;
      if (c < 0 || c >= columns) continue;
      if (others.has((row + dy) * columns + c)) return true;
    }
  }
  return false;
}

/** F1 of two changed-cell sets, a cell matched when the other set has one within CELL_SLACK. */
export function changeOverlap(page: ReadonlySet<number>, video: ReadonlySet<number>, width = 640): number | undefined {
  if (page.size === 0 && video.size === 0) return undefined;
  if (page.size === 0 || video.size === 0) return 0;
  const columns = Math.ceil(width / CELL);
  const precision = [...page].filter((cell) => nearAny(cell, video, columns)).length / page.size;
  const recall = [...video].filter((cell) => nearAny(cell, page, columns)).length / video.size;
  return precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
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
    const { minGain, maxStray, maxStrayOverNoise, minOverlap } = STEP_EVIDENCE_SETTINGS;
    // Stray beyond what the reading misses of words the page kept: not OCR noise, the page shows what the video does not.
    const strays = (share: number | undefined, noise: number) => share !== undefined && share > maxStray && share - noise > maxStrayOverNoise;
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
    } else if (strays(stray, keptAbsent) || strays(missing, videoKeptMissing)) {
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
      return before && after ? changedCells(before.pixels, after.pixels) : new Set();
    });
  }

  private videoCells(from: number, to: number): Set<number> {
    return cached(this.stateCells, `${from}:${to}`, () => {
      const [before, after] = [this.states[from], this.states[to]];
      return before && after ? changedCells(before.pixels, after.pixels) : new Set();
    });
  }
}
