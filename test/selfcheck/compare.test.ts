/**
 * The compare step's pure parts on made-up readings: words and their OCR slips, where a
 * screen changed, whether a step's change was the video's, and the alignment's priors
 * (a page that stops reacting cannot hide behind one state; a blank lead-in is skipped;
 * a moved page is placed by its changes).
 */
import { describe, expect, it } from "vitest";
import { CELL, changedCells, changeOverlap, forEachDifferingPixel, gainedWords, greyPicture, sameWord, wordsOf } from "../../src/metrics/change-evidence.ts";
import { alignTrajectory, type ImageReading, isBlankPicture, type PairSimilarity } from "../../src/selfcheck/compare.ts";
import { StepEvidenceSource } from "../../src/selfcheck/step-evidence.ts";

const WIDTH = 640;
const HEIGHT = 360;

/** A grey picture with dark boxes at the given cells of 20 px ([column, row]). */
function picture(boxes: Array<[number, number]> = []): Buffer {
  const pixels = Buffer.alloc(WIDTH * HEIGHT, 240);
  for (const [column, row] of boxes) {
    for (let y = row * 20; y < row * 20 + 20; y++) for (let x = column * 20; x < column * 20 + 20; x++) pixels[y * WIDTH + x] = 20;
  }
  return pixels;
}

const reading = (text: string, boxes: Array<[number, number]> = []): ImageReading => ({ text, features: new Float32Array(1), ...greyPicture(picture(boxes)) });

/** The changed cells between two grey pictures given as bare pixels. */
const cellsBetween = (a: Buffer, b: Buffer) => changedCells(greyPicture(a), greyPicture(b));

describe("words", () => {
  it("keeps numbers and words of four letters or more, drops short letter runs", () => {
    expect(wordsOf("Total: $1,299.50 — pat OK Cart (3 items)")).toEqual(["total", "1299.50", "cart", "3", "items"]);
  });

  it("matches OCR slips and glued words, never a different number", () => {
    expect(sameWord("northgate", "northqate")).toBe(true);
    expect(sameWord("topics", "alltopics")).toBe(true);
    expect(sameWord("12", "72")).toBe(false);
    expect(sameWord("12", "12")).toBe(true);
  });

  it("gains are a multiset difference", () => {
    expect(gainedWords(["cart", "3", "3", "items"], ["cart", "3"])).toEqual(["3", "items"]);
  });

  it("a word takes an equal word before an alike one, then the first alike one left", () => {
    // "cart" takes the equal "cart", not the alike "carts" before it, so "bart" (one slip from "cart") finds nothing.
    expect(gainedWords(["cart", "bart"], ["carts", "cart"])).toEqual(["bart"]);
    // Words are matched in order: "cat" takes "cart" (alike, none equal), so the later "cart" is gained.
    expect(gainedWords(["cat", "cart"], ["cart"])).toEqual(["cart"]);
  });

  it("gains agree with a plain one-by-one matching (equal first, else the first alike) on many word lists", () => {
    const plainGained = (after: readonly string[], before: readonly string[]): string[] => {
      const unmatched = [...before];
      const gained: string[] = [];
      for (const word of after) {
        const equal = unmatched.indexOf(word);
        const at = equal >= 0 ? equal : unmatched.findIndex((other) => sameWord(word, other));
        if (at >= 0) unmatched.splice(at, 1);
        else gained.push(word);
      }
      return gained;
    };
    const vocabulary = ["cart", "carts", "cat", "bart", "items", "item", "12", "1.5", "3", "expandall", "expand", "all"];
    let seed = 5;
    const next = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const list = () => Array.from({ length: Math.floor(next() * 10) }, () => vocabulary[Math.floor(next() * vocabulary.length)]!);
    for (let pair = 0; pair < 3000; pair++) {
      const [after, before] = [list(), list()];
      expect(gainedWords(after, before), `${after} / ${before}`).toEqual(plainGained(after, before));
    }
  });

  it("one slip is one edit in UTF-16 units: agrees with a full edit-distance table on many word pairs", () => {
    const editDistance = (a: string, b: string): number => {
      const table = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
      for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++)
          table[i]![j] = Math.min(table[i - 1]![j]! + 1, table[i]![j - 1]! + 1, table[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      return table[a.length]![b.length]!;
    };
    const expected = (a: string, b: string) => a === b || (!/\d/.test(a) && !/\d/.test(b) && (editDistance(a, b) <= 1 || a.includes(b) || b.includes(a)));
    const pieces = ["a", "b", "ab", "ba", "cart", "rt", "é", "😀", "ing", "x", "1", "12"];
    let seed = 11;
    const next = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const word = () => Array.from({ length: 1 + Math.floor(next() * 3) }, () => pieces[Math.floor(next() * pieces.length)]!).join("");
    for (let pair = 0; pair < 5000; pair++) {
      const [a, b] = [word(), word()];
      expect(sameWord(a, b), `${a} / ${b}`).toBe(expected(a, b));
    }
  });
});

describe("where a screen changed", () => {
  it("marks a cell changed once six of its pixels differ beyond a one-pixel shift, in the order cells reach six", () => {
    // Against a plain count of forEachDifferingPixel's visits, on pictures with scattered patches of change, one of them in the
    // bottom-right cell (a partial cell when the size is not a multiple of the grid's).
    let seed = 11;
    const random = () => {
      seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5;
      return ((seed ^ (seed >>> 12)) >>> 0) / 2 ** 32;
    };
    const noisy = (width: number, height: number) => {
      const pixels = Buffer.alloc(width * height, 230);
      const corners: Array<[number, number]> = [[width - 9, height - 9]];
      for (let patch = 0; patch < 12; patch++) corners.push([Math.floor(random() * width), Math.floor(random() * height)]);
      for (const [x0, y0] of corners) {
        for (let k = 0; k < 60; k++) {
          const [x, y] = [x0 + Math.floor(random() * 9), y0 + Math.floor(random() * 9)];
          if (x < width && y < height) pixels[y * width + x] = Math.floor(random() * 256);
        }
      }
      return pixels;
    };
    let unsorted = 0;
    for (const [width, height] of [
      [640, 360],
      [630, 347],
    ] as const) {
      const columns = Math.ceil(width / CELL);
      const lastCell = Math.ceil(height / CELL) * columns - 1;
      for (let trial = 0; trial < 8; trial++) {
        const [a, b] = [greyPicture(noisy(width, height), width), greyPicture(noisy(width, height), width)];
        const counts = new Map<number, number>();
        const expected: number[] = [];
        forEachDifferingPixel(a, b, width, (_, x, y) => {
          const cell = Math.floor(y / CELL) * columns + Math.floor(x / CELL);
          counts.set(cell, (counts.get(cell) ?? 0) + 1);
          if (counts.get(cell) === 6) expected.push(cell);
        });
        expect(expected).toContain(lastCell);
        if (expected.some((cell, index) => index > 0 && cell < expected[index - 1]!)) unsorted += 1;
        expect([...changedCells(a, b, width)]).toEqual(expected);
      }
    }
    // The order is the order cells reached six, not sorted: some trials show it.
    expect(unsorted).toBeGreaterThan(0);
  });

  it("finds the changed cells and scores overlap with slack for a small shift", () => {
    const before = picture();
    const after = picture([
      [5, 5],
      [6, 5],
    ]);
    const cells = cellsBetween(before, after);
    expect(cells.size).toBe(2);
    const shifted = cellsBetween(
      before,
      picture([
        [7, 6],
        [8, 6],
      ]),
    );
    expect(changeOverlap(cells, shifted)).toBe(1);
    const elsewhere = cellsBetween(before, picture([[25, 15]]));
    expect(changeOverlap(cells, elsewhere)).toBe(0);
    expect(changeOverlap(new Set(), new Set())).toBeUndefined();
  });

  it("a picture moved by one pixel has not changed; a new one-pixel line has", () => {
    const lines = (rows: number[], from = 0) => {
      const pixels = Buffer.alloc(WIDTH * HEIGHT, 235);
      for (const row of rows) for (let x = 100; x < 400; x++) pixels[(row + from) * WIDTH + x] = 30;
      return pixels;
    };
    const text = lines([50, 53, 57, 90, 94]);
    expect(cellsBetween(text, lines([50, 53, 57, 90, 94], 1)).size).toBe(0);
    // Sideways, and mid-grey strokes on the background, the same.
    const columns = (xs: number[], grey: number, from = 0) => {
      const pixels = Buffer.alloc(WIDTH * HEIGHT, 235);
      for (const x of xs) for (let y = 100; y < 200; y++) pixels[y * WIDTH + x + from] = grey;
      return pixels;
    };
    expect(cellsBetween(columns([300, 304, 309], 120), columns([300, 304, 309], 120, 1)).size).toBe(0);
    expect(cellsBetween(columns([300, 304, 309], 120, 1), columns([300, 304, 309], 120)).size).toBe(0);
    expect(cellsBetween(columns([300, 304, 309], 120), columns([300, 304, 309, 340], 120)).size).toBeGreaterThan(0);
    // Shifted by three pixels it is a change (a scroll, or a layout that moved).
    expect(cellsBetween(text, lines([50, 53, 57, 90, 94], 3)).size).toBeGreaterThan(0);
    expect(cellsBetween(text, lines([50, 53, 57, 90, 94, 200])).size).toBeGreaterThan(0);
    // Either way round: the line is there in the first picture and gone from the second.
    expect(cellsBetween(lines([50, 53, 57, 90, 94, 200]), text).size).toBeGreaterThan(0);
  });
});

describe("a step's change against the video's", () => {
  const videoBefore = reading("Cart is empty Subtotal 0", []);
  const videoAfter = reading("Cart Trail Runner Sneakers Subtotal 59.99", [
    [20, 4],
    [21, 4],
  ]);

  const evidenceFor = (pageAfter: ImageReading) =>
    new StepEvidenceSource([reading("Cart is empty Subtotal 0"), pageAfter], [videoBefore, videoAfter]).evidence(0, 0, 1);

  it("the same numbers and words gained: reproduced, by the exact numbers", () => {
    const evidence = evidenceFor(
      reading("Cart Trail Runner Sneakers Subtotal 59.99", [
        [20, 4],
        [21, 4],
      ]),
    );
    expect(evidence).toMatchObject({ reproduced: true, by: "numbers", gain: 1 });
  });

  it("most of the words gained, no number on either side: reproduced, by text", () => {
    const source = new StepEvidenceSource(
      [reading("Menu"), reading("Menu Opening hours Monday Friday", [[3, 3]])],
      [reading("Menu"), reading("Menu Opening hours Monday Friday Saturday", [[3, 3]])],
    );
    expect(source.evidence(0, 0, 1)).toMatchObject({ reproduced: true, by: "text" });
  });

  it("a small change: the exact number outweighs two words the frame's reading invented", () => {
    // The frame's reading of the after-state picked up a word its before-state missed and a smudge read as a word.
    const source = new StepEvidenceSource(
      [reading("Saved 0 Noodles Blueberry"), reading("Saved 1 Noodles Blueberry", [[28, 1]])],
      [reading("Saved 0 Noodles"), reading("Saved 1 Noodles Bowl piso", [[28, 1]])],
    );
    expect(source.evidence(0, 0, 1)).toMatchObject({ reproduced: true, by: "numbers" });
    const wrongCount = new StepEvidenceSource(
      [reading("Saved 0 Noodles Blueberry"), reading("Saved 2 Noodles Blueberry", [[28, 1]])],
      [reading("Saved 0 Noodles"), reading("Saved 1 Noodles Bowl piso", [[28, 1]])],
    );
    expect(wrongCount.evidence(0, 0, 1)).toMatchObject({ reproduced: false, by: "numbers" });
  });

  it("a wrong number in the same place: not reproduced, by numbers", () => {
    const evidence = evidenceFor(
      reading("Cart Trail Runner Sneakers Subtotal 04.44", [
        [20, 4],
        [21, 4],
      ]),
    );
    expect(evidence).toMatchObject({ reproduced: false, by: "numbers" });
  });

  it("no word gained where the video gained words (an outline toggled): not reproduced, by text", () => {
    const evidence = evidenceFor(reading("Cart is empty Subtotal 0", [[2, 15]]));
    expect(evidence).toMatchObject({ reproduced: false, by: "text", gain: 0 });
  });

  it("one word the video's reading gained is too little to say the page lacks it; two words, or a number, are not", () => {
    // A frame's reading garbles a word under the pointer ("Quillbrook" read "Qulbrak"): the video seems to gain it.
    const before = reading("Lanterns Quillbrook Harbour");
    const changedPage = reading("Lanterns Quillbrook Harbour", [[12, 6]]);
    const oneWord = new StepEvidenceSource([before, changedPage], [before, reading("Lanterns Qulbrak Harbour", [[12, 6]])]);
    expect(oneWord.evidence(0, 0, 1)).toMatchObject({ reproduced: true, by: "location", missing: 1 });
    const twoWords = new StepEvidenceSource([before, changedPage], [before, reading("Lanterns Quillbrook Harbour Ferries docked", [[12, 6]])]);
    expect(twoWords.evidence(0, 0, 1)).toMatchObject({ reproduced: false, by: "text" });
    // A number the video gained and the page lacks: read exactly, it is enough alone.
    const oneNumber = new StepEvidenceSource([before, changedPage], [before, reading("Lanterns Quillbrook Harbour 14", [[12, 6]])]);
    expect(oneNumber.evidence(0, 0, 1)).toMatchObject({ reproduced: false, by: "text", missing: 1 });
  });

  it("the video gained no word: a change in the same place counts", () => {
    const source = new StepEvidenceSource([reading("Board"), reading("Board", [[10, 10]])], [reading("Board"), reading("Board", [[10, 10]])]);
    expect(source.evidence(0, 0, 1)).toMatchObject({ reproduced: true, by: "location" });
    const elsewhere = new StepEvidenceSource([reading("Board"), reading("Board", [[30, 1]])], [reading("Board"), reading("Board", [[10, 10]])]);
    expect(elsewhere.evidence(0, 0, 1)).toMatchObject({ reproduced: false, by: "location", overlap: 0 });
  });
});

describe("alignment", () => {
  const pair = (alignment: number): PairSimilarity => ({ text: alignment, image: alignment, pixel: alignment, combined: alignment, alignment });
  const held = (count: number) => Array.from({ length: count }, (_, index) => ({ startSec: index * 2, endSec: index * 2 + 2 }));

  it("a page that stops reacting after its first step is not kept on one state", () => {
    // Four video states; screenshots 1..3 all show state 1 (the page froze).
    const matrix = [
      [pair(1), pair(0.4), pair(0.3), pair(0.3)],
      [pair(0.4), pair(1), pair(0.6), pair(0.5)],
      [pair(0.4), pair(1), pair(0.6), pair(0.5)],
      [pair(0.4), pair(1), pair(0.6), pair(0.5)],
    ];
    const alignment = alignTrajectory(matrix, { states: held(4), anchorEnd: true });
    expect(alignment.states).toEqual([0, 1, 2, 3]);
  });

  it("passing over a held state costs nothing when it is the state before it scrolled", () => {
    // State 1 is the page scrolled to the control (held while the pointer travels), state 2 the click's result, caught
    // in a poor frame: the screenshot after step 0 is a little more like state 1. One of the two is passed over either way.
    const matrix = [
      [pair(1), pair(0.3), pair(0.3), pair(0.3)],
      [pair(0.3), pair(0.62), pair(0.6), pair(0.3)],
      [pair(0.3), pair(0.3), pair(0.3), pair(1)],
    ];
    const options = { states: held(4), anchorEnd: true };
    expect(alignTrajectory(matrix, options).states).toEqual([0, 1, 3]);
    expect(alignTrajectory(matrix, { ...options, scrolled: [false, true, false, false] }).states).toEqual([0, 2, 3]);
  });

  it("without the end anchor and with fewer states than steps, a step may stay", () => {
    const matrix = [
      [pair(1), pair(0.2)],
      [pair(0.2), pair(1)],
      [pair(0.2), pair(1)],
    ];
    expect(alignTrajectory(matrix, { states: held(2), anchorEnd: false }).states).toEqual([0, 1, 1]);
  });

  it("skips a blank lead-in, and places a moved page by its changes", () => {
    // Every screenshot is equally unlike the three states; its changes say where it is.
    const flat = [pair(0.3), pair(0.3), pair(0.3)];
    const matrix = [flat, flat];
    const likeness = (_step: number, from: number, to: number) => (from === 1 && to === 2 ? 1 : 0);
    expect(alignTrajectory(matrix, { states: held(3), anchorEnd: false, firstState: 1, changeLikeness: likeness }).states).toEqual([1, 2]);
    expect(isBlankPicture(reading(""))).toBe(true);
    expect(
      isBlankPicture(
        reading("", [
          [1, 1],
          [2, 2],
          [3, 3],
        ]),
      ),
    ).toBe(false);
  });
});
