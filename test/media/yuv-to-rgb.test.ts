/**
 * YUV 4:2:0 to RGB on frames of random bytes, against the colour formulas written out in
 * floating point: every pixel of frames of even and odd sizes (an odd last column or row
 * is converted on its own). A chroma sample spread over the wrong pixels, or a byte
 * written to the wrong channel, shows up as a pixel far off.
 */

import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { compileWat } from "../../scripts/build-wasm.ts";
import { yuv420pFrameBytes, yuv420pToRgb, yuv420pToRgbScalar } from "../../src/media/yuv-to-rgb.ts";

/** A repeatable stream of bytes (a linear congruential generator). */
function randomBytes(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

const MATRICES = { bt709: [0.2126, 0.0722], bt601: [0.299, 0.114], bt2020nc: [0.2627, 0.0593], fcc: [0.3, 0.11], smpte240m: [0.212, 0.087] } as const;

/** The pixel at (x, y) by the textbook formulas, rounded and clamped. */
function expectedPixel(frame: Uint8Array, width: number, height: number, x: number, y: number, matrix: keyof typeof MATRICES, limited: boolean): number[] {
  const [kr, kb] = MATRICES[matrix];
  const kg = 1 - kr - kb;
  const chromaWidth = Math.ceil(width / 2);
  const chromaAt = (y >> 1) * chromaWidth + (x >> 1);
  const u = frame[width * height + chromaAt]! - 128;
  const v = frame[width * height + chromaWidth * Math.ceil(height / 2) + chromaAt]! - 128;
  const luma = limited ? ((frame[y * width + x]! - 16) * 255) / 219 : frame[y * width + x]!;
  const chroma = limited ? 255 / 224 : 1;
  const red = luma + 2 * (1 - kr) * chroma * v;
  const green = luma - ((2 * kb * (1 - kb)) / kg) * chroma * u - ((2 * kr * (1 - kr)) / kg) * chroma * v;
  const blue = luma + 2 * (1 - kb) * chroma * u;
  return [red, green, blue].map((value) => Math.max(0, Math.min(255, Math.round(value))));
}

describe("yuv420p to RGB", () => {
  // Even sizes, odd widths and heights, frames a few pixels across.
  // Whole groups of sixteen columns go through the WebAssembly kernel (64, 1280, 333 and 50
  // wide, the rest of their columns in JavaScript); narrower frames are JavaScript alone.
  const sizes = [
    [64, 8],
    [50, 6],
    [333, 181],
    [17, 3],
    [1280, 4],
    [6, 5],
    [8, 5],
    [32, 7],
  ] as const;
  for (const [width, height] of sizes) {
    it(`converts every pixel of a ${width}x${height} frame as the formulas say`, () => {
      const frame = randomBytes(yuv420pFrameBytes({ width, height }), width * 1000 + height);
      for (const [matrix, range] of [
        ["bt709", "limited"],
        ["bt601", "full"],
        ["bt2020nc", "limited"],
        ["fcc", "limited"],
        ["smpte240m", "full"],
      ] as const) {
        const rgb = yuv420pToRgb(frame, { width, height }, { pixelFormat: "yuv420p", range, matrix });
        expect(rgb.length).toBe(width * height * 3);
        let worst = 0;
        let where = "";
        for (let y = 0; y < height; y++) {
          for (let x = 0; x < width; x++) {
            const expected = expectedPixel(frame, width, height, x, y, matrix, range === "limited");
            for (let channel = 0; channel < 3; channel++) {
              const off = Math.abs(rgb[(y * width + x) * 3 + channel]! - expected[channel]!);
              if (off > worst) [worst, where] = [off, `(${x},${y}) channel ${channel}`];
            }
          }
        }
        // Fixed point against floating point: at most one level apart.
        expect(worst, `${matrix} ${range}: worst at ${where}`).toBeLessThanOrEqual(1);
      }
    });
  }

  it("the WebAssembly kernel and the JavaScript write the very same bytes, for every matrix and range", () => {
    for (const [width, height] of [
      [16, 2],
      [48, 6],
      [1280, 6],
      [50, 6],
      [34, 7],
      [8, 5],
    ] as const) {
      const size = { width, height };
      const frame = randomBytes(yuv420pFrameBytes(size), width + height);
      for (const matrix of ["bt709", "bt601", "bt2020nc", "fcc", "smpte240m"]) {
        for (const range of ["limited", "full"] as const) {
          const layout = { pixelFormat: "yuv420p", range, matrix } as const;
          const withKernel = yuv420pToRgb(frame, size, layout);
          expect(withKernel.equals(yuv420pToRgbScalar(frame, size, layout)), `${width}x${height} ${matrix} ${range}`).toBe(true);
        }
      }
    }
  });

  it("the committed kernel is what its WebAssembly text compiles to (run `npm run build:wasm` after changing it)", async () => {
    const compiled = await compileWat("src/media/yuv-to-rgb.wat");
    expect(Buffer.from(compiled).equals(fs.readFileSync("src/media/yuv-to-rgb.wasm"))).toBe(true);
  });

  it("writes into the caller's buffer when given one, exactly as into a new one", () => {
    for (const size of [
      { width: 6, height: 5 },
      { width: 40, height: 5 },
    ]) {
      const layout = { pixelFormat: "yuv420p", range: "limited", matrix: "bt709" } as const;
      const frame = randomBytes(yuv420pFrameBytes(size), 7);
      const reused = Buffer.alloc(size.width * size.height * 3, 0xaa);
      expect(yuv420pToRgb(frame, size, layout, reused)).toBe(reused);
      expect(reused).toEqual(yuv420pToRgb(frame, size, layout));
    }
  });

  it("refuses an RGB buffer of the wrong size", () => {
    const size = { width: 6, height: 5 };
    const layout = { pixelFormat: "yuv420p", range: "limited", matrix: "bt709" } as const;
    const frame = randomBytes(yuv420pFrameBytes(size), 7);
    expect(() => yuv420pToRgb(frame, size, layout, Buffer.alloc(6 * 5 * 3 + 1))).toThrow(/a 6x5 RGB frame has 90 bytes, not 91/);
  });

  it("refuses a frame whose length does not fit its size", () => {
    expect(() => yuv420pToRgb(new Uint8Array(10), { width: 4, height: 4 }, { pixelFormat: "yuv420p", range: "limited" })).toThrow(
      /a 4x4 yuv420p frame has 24 bytes, not 10/,
    );
  });
});
