/**
 * 8-bit planar YUV 4:2:0 (ffmpeg's yuv420p) to packed RGB, honouring the stream's matrix
 * and range. The video-state pass has ffmpeg write its full-size frames as they decode,
 * without converting them, and converts here only the few that become a state's frame:
 * ffmpeg converting every sampled frame to RGB cost it more than the decoding it saves.
 * Each chroma sample covers its 2×2 block of pixels (as swscale's unscaled converter does).
 *
 * Whole groups of sixteen columns go through a WebAssembly SIMD kernel (yuv-to-rgb.wat,
 * compiled by `npm run build:wasm` into the yuv-to-rgb.wasm beside it), about four times
 * as fast as the JavaScript below, which does the rest of the columns, an odd last row or
 * column, and everything where WebAssembly SIMD is missing. Both do the same integer
 * arithmetic, so the bytes are the same either way.
 */
import fs from "node:fs";
import { log } from "../log/logger.ts";
import type { FrameSize, PixelLayout } from "./ffmpeg-header-fields.ts";

/** Luma weights (Kr, Kb) of the matrices ffmpeg names; an undeclared or other one is read as BT.601, swscale's default. */
const LUMA_WEIGHTS: Record<string, [number, number]> = {
  bt709: [0.2126, 0.0722],
  fcc: [0.3, 0.11],
  smpte240m: [0.212, 0.087],
  bt2020nc: [0.2627, 0.0593],
  bt2020c: [0.2627, 0.0593],
};
const BT601: [number, number] = [0.299, 0.114];

/** Bytes of one yuv420p frame: a chroma plane is half the size each way, rounded up. */
export function yuv420pFrameBytes({ width, height }: FrameSize): number {
  return width * height + 2 * Math.ceil(width / 2) * Math.ceil(height / 2);
}

/** The conversion's integer coefficients, 16.16 fixed point. */
interface Coefficients {
  lumaOffset: number;
  lumaScale: number;
  crToR: number;
  cbToG: number;
  crToG: number;
  cbToB: number;
}

const FIXED = 1 << 16;

function coefficients(layout: PixelLayout): Coefficients {
  const [kr, kb] = (layout.matrix && LUMA_WEIGHTS[layout.matrix]) || BT601;
  const kg = 1 - kr - kb;
  const limited = layout.range === "limited";
  const chromaScale = limited ? 255 / 224 : 1;
  return {
    lumaOffset: limited ? 16 : 0,
    lumaScale: Math.round((limited ? 255 / 219 : 1) * FIXED),
    crToR: Math.round(2 * (1 - kr) * chromaScale * FIXED),
    cbToG: Math.round(((-2 * kb * (1 - kb)) / kg) * chromaScale * FIXED),
    crToG: Math.round(((-2 * kr * (1 - kr)) / kg) * chromaScale * FIXED),
    cbToB: Math.round(2 * (1 - kb) * chromaScale * FIXED),
  };
}

/** The frame in RGB, written into `into` when given (of exactly width × height × 3 bytes): about a millisecond for a 720p frame. */
export function yuv420pToRgb(frame: Uint8Array, size: FrameSize, layout: PixelLayout, into?: Buffer): Buffer {
  return convert(frame, size, layout, into, simdKernel());
}

/**
 * The same conversion in JavaScript alone (some four times slower): what runs where
 * WebAssembly SIMD is missing, and what the kernel is tested against byte for byte.
 */
export function yuv420pToRgbScalar(frame: Uint8Array, size: FrameSize, layout: PixelLayout, into?: Buffer): Buffer {
  return convert(frame, size, layout, into, undefined);
}

function convert(frame: Uint8Array, size: FrameSize, layout: PixelLayout, into: Buffer | undefined, kernel: SimdKernel | undefined): Buffer {
  const { width, height } = size;
  if (frame.length !== yuv420pFrameBytes(size)) throw new Error(`a ${width}x${height} yuv420p frame has ${yuv420pFrameBytes(size)} bytes, not ${frame.length}`);
  if (into && into.length !== width * height * 3) throw new Error(`a ${width}x${height} RGB frame has ${width * height * 3} bytes, not ${into.length}`);
  const rgb = into ?? Buffer.allocUnsafe(width * height * 3);
  // Stores into a clamped view saturate at 0 and 255: no clamping code in the loop.
  const clamped = new Uint8ClampedArray(rgb.buffer, rgb.byteOffset, rgb.length);
  const matrix = coefficients(layout);
  const evenHeight = height & ~1;
  const simdColumns = kernel && evenHeight > 0 ? width & ~15 : 0;
  if (simdColumns > 0) kernel!.convert(frame, size, matrix, evenHeight, simdColumns, rgb);
  convertRowPairs(frame, clamped, size, matrix, simdColumns, evenHeight);
  // An odd size's last column or row, pixel by pixel.
  for (let row = 0; row < height; row++) {
    if (width & 1) convertPixel(frame, clamped, size, matrix, row, width - 1);
    if (row === height - 1 && height & 1) for (let column = 0; column < width; column++) convertPixel(frame, clamped, size, matrix, row, column);
  }
  return rgb;
}

/** The 2×2 blocks of rows [0, to) (even), from column `fromColumn` (even), that lie wholly inside the frame: four pixels share one chroma sample. */
function convertRowPairs(frame: Uint8Array, rgb: Uint8ClampedArray, { width, height }: FrameSize, matrix: Coefficients, fromColumn: number, to: number): void {
  const { lumaOffset, lumaScale, crToR, cbToG, crToG, cbToB } = matrix;
  const chromaWidth = Math.ceil(width / 2);
  const uPlane = width * height;
  const vPlane = uPlane + chromaWidth * Math.ceil(height / 2);
  const evenWidth = width & ~1;
  // Rounding, and the luma offset taken out once per block instead of once per pixel.
  const bias = FIXED / 2 - lumaOffset * lumaScale;
  for (let row = 0; row < to; row += 2) {
    const chromaRow = (row >> 1) * chromaWidth;
    const upper = row * width;
    const lower = upper + width;
    let upperOut = (upper + fromColumn) * 3;
    let lowerOut = (lower + fromColumn) * 3;
    for (let column = fromColumn; column < evenWidth; column += 2) {
      const chromaAt = chromaRow + (column >> 1);
      const u = frame[uPlane + chromaAt]! - 128;
      const v = frame[vPlane + chromaAt]! - 128;
      const red = crToR * v + bias;
      const green = cbToG * u + crToG * v + bias;
      const blue = cbToB * u + bias;
      let y = frame[upper + column]! * lumaScale;
      rgb[upperOut] = (y + red) >> 16;
      rgb[upperOut + 1] = (y + green) >> 16;
      rgb[upperOut + 2] = (y + blue) >> 16;
      y = frame[upper + column + 1]! * lumaScale;
      rgb[upperOut + 3] = (y + red) >> 16;
      rgb[upperOut + 4] = (y + green) >> 16;
      rgb[upperOut + 5] = (y + blue) >> 16;
      y = frame[lower + column]! * lumaScale;
      rgb[lowerOut] = (y + red) >> 16;
      rgb[lowerOut + 1] = (y + green) >> 16;
      rgb[lowerOut + 2] = (y + blue) >> 16;
      y = frame[lower + column + 1]! * lumaScale;
      rgb[lowerOut + 3] = (y + red) >> 16;
      rgb[lowerOut + 4] = (y + green) >> 16;
      rgb[lowerOut + 5] = (y + blue) >> 16;
      upperOut += 6;
      lowerOut += 6;
    }
  }
}

function convertPixel(frame: Uint8Array, rgb: Uint8ClampedArray, { width, height }: FrameSize, matrix: Coefficients, row: number, column: number): void {
  const chromaWidth = Math.ceil(width / 2);
  const uPlane = width * height;
  const vPlane = uPlane + chromaWidth * Math.ceil(height / 2);
  const chromaAt = (row >> 1) * chromaWidth + (column >> 1);
  const u = frame[uPlane + chromaAt]! - 128;
  const v = frame[vPlane + chromaAt]! - 128;
  const y = (frame[row * width + column]! - matrix.lumaOffset) * matrix.lumaScale + FIXED / 2;
  const out = (row * width + column) * 3;
  rgb[out] = (y + matrix.crToR * v) >> 16;
  rgb[out + 1] = (y + matrix.cbToG * u + matrix.crToG * v) >> 16;
  rgb[out + 2] = (y + matrix.cbToB * u) >> 16;
}

/** The compiled kernel and the memory it works in, grown to the largest frame converted so far. */
class SimdKernel {
  private readonly instance: WebAssembly.Instance;
  constructor(module: WebAssembly.Module) {
    this.instance = new WebAssembly.Instance(module, {});
  }

  /** Rows [0, rows) and columns [0, columns) (a multiple of 16) of `frame` into `rgb`; `rgb`'s other columns get whatever the memory held. */
  convert(frame: Uint8Array, { width, height }: FrameSize, matrix: Coefficients, rows: number, columns: number, rgb: Buffer): void {
    const memory = this.instance.exports.memory as WebAssembly.Memory;
    const chromaWidth = Math.ceil(width / 2);
    const uPlane = width * height;
    const vPlane = uPlane + chromaWidth * Math.ceil(height / 2);
    // The frame at 0, its RGB after it from the next 16-byte boundary: the kernel reads only
    // inside the frame's planes and writes only inside that RGB.
    const out = (frame.length + 15) & ~15;
    const rgbBytes = rows * width * 3;
    const needed = out + rgbBytes;
    if (memory.buffer.byteLength < needed) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
    new Uint8Array(memory.buffer, 0, frame.length).set(frame);
    const { lumaOffset, lumaScale, crToR, cbToG, crToG, cbToB } = matrix;
    const run = this.instance.exports.convert as (...args: number[]) => void;
    run(0, uPlane, vPlane, out, width, rows, columns, chromaWidth, lumaScale, FIXED / 2 - lumaOffset * lumaScale, crToR, cbToG, crToG, cbToB);
    rgb.set(new Uint8Array(memory.buffer, out, rgbBytes));
  }
}

let kernel: SimdKernel | null | undefined;

/** The kernel, compiled on first use; undefined (and said once) where it cannot be: the JavaScript does all. */
function simdKernel(): SimdKernel | undefined {
  if (kernel === undefined) {
    try {
      kernel = new SimdKernel(new WebAssembly.Module(fs.readFileSync(new URL("./yuv-to-rgb.wasm", import.meta.url))));
    } catch (error) {
      kernel = null;
      log("media").warn(`YUV to RGB runs without its WebAssembly SIMD kernel (same bytes, about four times slower): ${(error as Error).message}`);
    }
  }
  return kernel ?? undefined;
}
