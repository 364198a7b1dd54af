/**
 * The crop preparation's pixel rules on grey buffers drawn here (no screenshot, no OCR):
 * the stretch keeps an off-white background white, and only dark areas larger and
 * denser than a letter are inverted.
 */
import { describe, expect, it } from "vitest";
import { CROP_PREPARATION_SETTINGS, invertDarkAreas, stretchContrast } from "../../src/evaluator/judge/crop-preparation.ts";

/** A grey canvas with rectangles painted on it. */
function canvas(width: number, height: number, background: number) {
  const grey = Buffer.alloc(width * height, background);
  const paint = (left: number, top: number, boxWidth: number, boxHeight: number, value: number) => {
    for (let y = top; y < top + boxHeight; y++) grey.fill(value, y * width + left, y * width + left + boxWidth);
  };
  const at = (x: number, y: number) => grey[y * width + x]!;
  return { grey, paint, at };
}

describe("stretchContrast", () => {
  it("sends an off-white background that fills almost the whole crop to white, and its few dark pixels to black", () => {
    const { grey, paint, at } = canvas(400, 100, 248);
    paint(10, 40, 30, 10, 70); // 0.75 % of the crop: a small dark button
    stretchContrast(grey);
    expect([at(200, 10), at(20, 45)]).toEqual([255, 0]);
  });

  it("keeps a light badge light when its dark letters are under 1 % of the crop", () => {
    const { grey, paint, at } = canvas(400, 100, 255);
    paint(100, 40, 80, 20, 226); // the badge, 4 % of the crop
    paint(110, 45, 40, 4, 20); // its letters, 0.4 %
    stretchContrast(grey);
    expect([at(120, 46), at(300, 10)]).toEqual([0, 255]);
    expect(at(105, 42)).toBeGreaterThan(200);
  });

  it("scales the grey levels between the darkest and the lightest linearly", () => {
    const { grey, paint, at } = canvas(100, 100, 200);
    paint(0, 0, 100, 30, 100);
    paint(0, 30, 100, 10, 150);
    stretchContrast(grey);
    expect([at(5, 5), at(5, 80)]).toEqual([0, 255]);
    expect(Math.abs(at(5, 35) - 127.5)).toBeLessThanOrEqual(0.5);
  });

  it("leaves a crop of one grey level as it is", () => {
    const { grey, at } = canvas(50, 50, 90);
    stretchContrast(grey);
    expect(at(10, 10)).toBe(90);
  });
});

describe("invertDarkAreas", () => {
  const { minWidth, minHeight } = CROP_PREPARATION_SETTINGS.darkArea;

  it("inverts a dark banner with light text in it, box and text alike, and nothing around it", () => {
    const { grey, paint, at } = canvas(300, 80, 255);
    paint(0, 10, 300, 24, 30); // the banner
    paint(40, 16, 60, 12, 230); // its light "text"
    invertDarkAreas(grey, 300, 80);
    expect([at(5, 12), at(50, 20), at(5, 60)]).toEqual([225, 25, 255]);
  });

  it("leaves letters alone: thin strokes, and a bold glyph that leaves most of its box light", () => {
    const { grey, paint, at } = canvas(200, 80, 255);
    paint(10, 10, 3, 40, 0); // a tall thin stroke ("l")
    paint(30, 10, 60, 3, 0); // an underline, far wider than a letter
    // A bold "O": a ring 40 × 40, 7 px thick (58 % of its box dark, just under the 60 % of a dark area).
    paint(100, 10, 40, 7, 0);
    paint(100, 43, 40, 7, 0);
    paint(100, 10, 7, 40, 0);
    paint(133, 10, 7, 40, 0);
    invertDarkAreas(grey, 200, 80);
    expect([at(11, 20), at(40, 11), at(102, 12), at(120, 30)]).toEqual([0, 0, 0, 255]);
  });

  it("inverts a dark patch only from the size a button or badge has", () => {
    const small = canvas(100, 60, 255);
    small.paint(10, 10, minWidth - 1, minHeight + 4, 20);
    invertDarkAreas(small.grey, 100, 60);
    expect(small.at(12, 12)).toBe(20);
    const badge = canvas(100, 60, 255);
    badge.paint(10, 10, minWidth, minHeight, 20);
    invertDarkAreas(badge.grey, 100, 60);
    expect(badge.at(12, 12)).toBe(235);
  });

  it("inverts a dark patch only from the height a button or badge has", () => {
    const thin = canvas(100, 60, 255);
    thin.paint(10, 10, minWidth + 10, minHeight - 1, 20);
    invertDarkAreas(thin.grey, 100, 60);
    expect(thin.at(12, 12)).toBe(20);
  });

  it("turns a dark button on a light card of a dark page the same way as the page, once", () => {
    const { grey, paint, at } = canvas(200, 120, 20);
    paint(20, 20, 120, 70, 240); // the light card (the page stays 65 % dark)
    paint(30, 35, 60, 24, 30); // a dark button on it
    paint(40, 43, 30, 6, 230); // the button's light label
    invertDarkAreas(grey, 200, 120);
    // The page's box covers the card and the button: each pixel is inverted once, the button's as well as the page's.
    expect([at(5, 5), at(25, 25), at(32, 37), at(45, 45)]).toEqual([235, 15, 225, 25]);
  });

  it("inverts a dark page as a whole, so its text reads dark on light", () => {
    const { grey, paint, at } = canvas(120, 60, 20);
    paint(10, 20, 50, 10, 220); // light text on it
    invertDarkAreas(grey, 120, 60);
    expect([at(0, 0), at(30, 25)]).toEqual([235, 35]);
  });
});
