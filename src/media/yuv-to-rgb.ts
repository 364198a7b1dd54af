/**
 * 8-bit planar YUV 4:2:0 (ffmpeg's yuv420p) to packed RGB, honouring the stream's matrix
 * and range. The video-state pass has ffmpeg write its full-size frames as they decode,
 * without converting them, and converts here only the few that become a state's frame:
 * ffmpeg converting every sampled frame to RGB cost it more than the decoding it saves.
 * Each chroma sample covers its 2×2 block of pixels (as swscale's unscaled converter does).
 */
import os from "node:os";
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


/** The frame in RGB, written into `into` when given (of exactly width × height × 3 bytes): a few milliseconds of JavaScript for a 720p frame. */
export function yuv420pToRgb(frame: Uint8Array, size: FrameSize, layout: PixelLayout, into?: Buffer): Buffer {
  const { width, height } = size;
  if (frame.length !== yuv420pFrameBytes(size)) throw new Error(`a ${width}x${height} yuv420p frame has ${yuv420pFrameBytes(size)} bytes, not ${frame.length}`);
  if (into && into.length !== width * height * 3) throw new Error(`a ${width}x${height} RGB frame has ${width * height * 3} bytes, not ${into.length}`);
  const rgb = into ?? Buffer.allocUnsafe(width * height * 3);
  // Stores into a clamped view saturate at 0 and 255: no clamping code in the loop.
  const clamped = new Uint8ClampedArray(rgb.buffer, rgb.byteOffset, rgb.length);
  const matrix = coefficients(layout);
  const evenHeight = height & ~1;
  if (LITTLE_ENDIAN && width % 4 === 0 && rgb.byteOffset % 4 === 0) convertRowPairsByWords(frame, rgb, size, matrix, evenHeight);
  else convertRowPairs(frame, clamped, size, matrix, 0, evenHeight);
  // An odd size's last column or row, pixel by pixel.
  for (let row = 0; row < height; row++) {
    if (width & 1) convertPixel(frame, clamped, size, matrix, row, width - 1);
    if (row === height - 1 && height & 1) for (let column = 0; column < width; column++) convertPixel(frame, clamped, size, matrix, row, column);
  }
  return rgb;
}

/** The 2×2 blocks of rows [from, to) (both even) that lie wholly inside the frame: four pixels share one chroma sample. */
function convertRowPairs(frame: Uint8Array, rgb: Uint8ClampedArray, { width, height }: FrameSize, matrix: Coefficients, from: number, to: number): void {
  const { lumaOffset, lumaScale, crToR, cbToG, crToG, cbToB } = matrix;
  const chromaWidth = Math.ceil(width / 2);
  const uPlane = width * height;
  const vPlane = uPlane + chromaWidth * Math.ceil(height / 2);
  const evenWidth = width & ~1;
  // Rounding, and the luma offset taken out once per block instead of once per pixel.
  const bias = FIXED / 2 - lumaOffset * lumaScale;
  for (let row = from; row < to; row += 2) {
    const chromaRow = (row >> 1) * chromaWidth;
    const upper = row * width;
    const lower = upper + width;
    let upperOut = upper * 3;
    let lowerOut = lower * 3;
    for (let column = 0; column < evenWidth; column += 2) {
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

/**
 * Bytes of the clamped channel value v at CLAMPED[v + CLAMP_OFFSET]: wide enough for every
 * matrix and range (a channel's unclamped value stays within ±600).
 */
const CLAMP_OFFSET = 1024;
/** The word path packs a pixel's bytes lowest first. */
const LITTLE_ENDIAN = os.endianness() === "LE";
const CLAMPED = Uint8Array.from({ length: 2 * CLAMP_OFFSET }, (_, index) => Math.max(0, Math.min(255, index - CLAMP_OFFSET)));

/**
 * The same conversion for a width that is a multiple of four, about twice as fast:
 * two chroma samples (four pixels, twelve bytes) at a time, each row's twelve bytes
 * stored as three little-endian words, clamped through a table. Same arithmetic, same bytes.
 */
function convertRowPairsByWords(frame: Uint8Array, rgb: Buffer, { width, height }: FrameSize, matrix: Coefficients, to: number): void {
  const { lumaOffset, lumaScale, crToR, cbToG, crToG, cbToB } = matrix;
  const words = new Int32Array(rgb.buffer, rgb.byteOffset, rgb.length >> 2);
  const clamp = CLAMPED;
  const chromaWidth = width >> 1;
  const uPlane = width * height;
  const vPlane = uPlane + chromaWidth * Math.ceil(height / 2);
  // As convertRowPairs' bias, plus the table's offset: (value >> 16) lands on its entry.
  const bias = FIXED / 2 - lumaOffset * lumaScale + CLAMP_OFFSET * FIXED;
  for (let row = 0; row < to; row += 2) {
    const chromaRow = (row >> 1) * chromaWidth;
    const upper = row * width;
    const lower = upper + width;
    let upperOut = (upper * 3) >> 2;
    let lowerOut = (lower * 3) >> 2;
    for (let column = 0; column < width; column += 4) {
      const chromaAt = chromaRow + (column >> 1);
      let u = frame[uPlane + chromaAt]! - 128;
      let v = frame[vPlane + chromaAt]! - 128;
      const red0 = crToR * v + bias;
      const green0 = cbToG * u + crToG * v + bias;
      const blue0 = cbToB * u + bias;
      u = frame[uPlane + chromaAt + 1]! - 128;
      v = frame[vPlane + chromaAt + 1]! - 128;
      const red1 = crToR * v + bias;
      const green1 = cbToG * u + crToG * v + bias;
      const blue1 = cbToB * u + bias;
      let y0 = frame[upper + column]! * lumaScale;
      let y1 = frame[upper + column + 1]! * lumaScale;
      let y2 = frame[upper + column + 2]! * lumaScale;
      let y3 = frame[upper + column + 3]! * lumaScale;
      words[upperOut] = clamp[(y0 + red0) >> 16]! | (clamp[(y0 + green0) >> 16]! << 8) | (clamp[(y0 + blue0) >> 16]! << 16) | (clamp[(y1 + red0) >> 16]! << 24);
      words[upperOut + 1] = clamp[(y1 + green0) >> 16]! | (clamp[(y1 + blue0) >> 16]! << 8) | (clamp[(y2 + red1) >> 16]! << 16) | (clamp[(y2 + green1) >> 16]! << 24);
      words[upperOut + 2] = clamp[(y2 + blue1) >> 16]! | (clamp[(y3 + red1) >> 16]! << 8) | (clamp[(y3 + green1) >> 16]! << 16) | (clamp[(y3 + blue1) >> 16]! << 24);
      y0 = frame[lower + column]! * lumaScale;
      y1 = frame[lower + column + 1]! * lumaScale;
      y2 = frame[lower + column + 2]! * lumaScale;
      y3 = frame[lower + column + 3]! * lumaScale;
      words[lowerOut] = clamp[(y0 + red0) >> 16]! | (clamp[(y0 + green0) >> 16]! << 8) | (clamp[(y0 + blue0) >> 16]! << 16) | (clamp[(y1 + red0) >> 16]! << 24);
      words[lowerOut + 1] = clamp[(y1 + green0) >> 16]! | (clamp[(y1 + blue0) >> 16]! << 8) | (clamp[(y2 + red1) >> 16]! << 16) | (clamp[(y2 + green1) >> 16]! << 24);
      words[lowerOut + 2] = clamp[(y2 + blue1) >> 16]! | (clamp[(y3 + red1) >> 16]! << 8) | (clamp[(y3 + green1) >> 16]! << 16) | (clamp[(y3 + blue1) >> 16]! << 24);
      upperOut += 3;
      lowerOut += 3;
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
