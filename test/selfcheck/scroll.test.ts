/**
 * Telling a scrolled picture of a page from a changed one (src/selfcheck/scroll.ts), on
 * made-up grey pictures at the self-check's 640 × 360.
 */
import { describe, expect, it } from "vitest";
import { scrollBetween, scrolledFromPrevious } from "../../src/selfcheck/scroll.ts";

const WIDTH = 640;
const HEIGHT = 360;

/**
 * A tall page of rows of "text" (dark runs of varied length and place), seen from `top`:
 * the picture shows the page's rows top … top + 359.
 */
function view(top: number, page = pageRows(900)): Buffer {
  const pixels = Buffer.alloc(WIDTH * HEIGHT, 245);
  for (let y = 0; y < HEIGHT; y++) {
    const run = page[top + y];
    if (!run) continue;
    for (let x = run.from; x < run.to; x++) pixels[y * WIDTH + x] = 40;
  }
  return pixels;
}

/** Rows of a page: every 12th row starts a 7-row line of text whose start and length vary from line to line. */
function pageRows(height: number): Array<{ from: number; to: number } | undefined> {
  return Array.from({ length: height }, (_, row) => {
    const line = Math.floor(row / 12);
    if (row % 12 >= 7) return undefined;
    const from = 20 + ((line * 97) % 200);
    return { from, to: from + 120 + ((line * 53) % 300) };
  });
}

describe("scroll between two pictures", () => {
  it("finds how far the page scrolled, either way", () => {
    expect(scrollBetween(view(0), view(150))).toBe(150);
    expect(scrollBetween(view(200), view(130))).toBe(-70);
  });

  it("a change in place is not a scroll, nor are equal pictures or a one-row settle", () => {
    const other = view(0, pageRows(900).reverse());
    expect(scrollBetween(view(0), other)).toBeUndefined();
    expect(scrollBetween(view(40), view(40))).toBeUndefined();
    expect(scrollBetween(view(40), view(41))).toBeUndefined();
  });

  it("a plain background matches itself at any shift: it proves no scroll", () => {
    const plain = Buffer.alloc(WIDTH * HEIGHT, 245);
    const band = Buffer.from(plain);
    band.fill(40, 0, WIDTH * 30);
    expect(scrollBetween(plain, band)).toBeUndefined();
  });

  it("flags, in a sequence, each picture that is the one before it scrolled", () => {
    const changed = view(150, pageRows(900).reverse());
    expect(scrolledFromPrevious([view(0), view(0), view(150), changed, view(0)])).toEqual([false, false, true, false, false]);
  });
});
