/**
 * The named fallback for DINO when its model is absent: "ssim-gray-256" (see
 * METRIC_SETTINGS.visualFallback for why this one). Both images are turned grey and
 * resized to 256×256 (screenshots share the task's resolution, so no aspect is lost
 * between the two), then SSIM is averaged over 8×8 windows placed every 4 pixels.
 */
import { pictureSharp } from "./decoded-pictures.ts";
import { METRIC_SETTINGS } from "./settings.ts";

export async function greyPixels(image: Buffer, side: number): Promise<Uint8Array> {
  const { data } = await (await pictureSharp(image))
    .removeAlpha()
    .greyscale()
    .resize({ width: side, height: side, fit: "fill", kernel: "cubic" })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Mean SSIM of two equally sized grey images (row-major, `side` × `side`), clipped to [0, 1]. */
export function meanSsim(a: Uint8Array, b: Uint8Array, side: number): number {
  const { window, step, k1, k2 } = METRIC_SETTINGS.visualFallback;
  const c1 = (k1 * 255) ** 2;
  const c2 = (k2 * 255) ** 2;
  const count = window * window;
  let total = 0;
  let windows = 0;
  for (let top = 0; top + window <= side; top += step) {
    for (let left = 0; left + window <= side; left += step) {
      let sumA = 0;
      let sumB = 0;
      let sumAA = 0;
      let sumBB = 0;
      let sumAB = 0;
      for (let y = top; y < top + window; y += 1) {
        for (let x = left; x < left + window; x += 1) {
          const pa = a[y * side + x] ?? 0;
          const pb = b[y * side + x] ?? 0;
          sumA += pa;
          sumB += pb;
          sumAA += pa * pa;
          sumBB += pb * pb;
          sumAB += pa * pb;
        }
      }
      const meanA = sumA / count;
      const meanB = sumB / count;
      const varA = sumAA / count - meanA * meanA;
      const varB = sumBB / count - meanB * meanB;
      const cov = sumAB / count - meanA * meanB;
      total += ((2 * meanA * meanB + c1) * (2 * cov + c2)) / ((meanA * meanA + meanB * meanB + c1) * (varA + varB + c2));
      windows += 1;
    }
  }
  if (windows === 0) return 0;
  return Math.max(0, Math.min(1, total / windows));
}
