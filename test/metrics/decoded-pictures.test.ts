/**
 * A picture decoded once and measured from its pixels gives exactly what measuring the file
 * gave, for every kind of picture: where that is not assured (16 bits, an ICC profile, grey,
 * a JPEG) the file is used. The memory is bounded and forgets failures, and a prepared OCR
 * crop's content key, taken from the pixels in hand, is the one decoding its PNG gives.
 */
import { createHash } from "node:crypto";
import sharp, { type Sharp } from "sharp";
import { beforeEach, describe, expect, it } from "vitest";
import { prepareCrop } from "../../src/evaluator/judge/crop-preparation.ts";
import {
  DecodedPictureMemory,
  type DecodedPixels,
  decodedPicturesHeld,
  decodedPixels,
  decodesLosslessly,
  forgetDecodedPictures,
  pictureSharp,
} from "../../src/metrics/decoded-pictures.ts";
import { imageContentKey } from "../../src/metrics/image-readings.ts";

const [WIDTH, HEIGHT] = [97, 61];

/**
 * Pixels with every level 0-255 in every channel (the top rows, alpha included), then edges
 * and noise (a fixed generator, so every run sees the same).
 */
function busyPixels(channels: number): Buffer {
  const data = Buffer.alloc(WIDTH * HEIGHT * channels);
  let state = 12345;
  for (let index = 0; index < data.length; index++) {
    state = (state * 1103515245 + 12345) >>> 0;
    const pixel = Math.floor(index / channels);
    const [x, y, channel] = [pixel % WIDTH, Math.floor(pixel / WIDTH), index % channels];
    const edge = (x > 30 && x < 60) !== (y > 20 && y < 40) ? 200 : 30;
    data[index] = y < 8 ? (pixel + channel * 85) & 0xff : (edge + ((x * 3 + y * channel) % 40) + (state >>> 28)) & 0xff;
  }
  return data;
}

function raw(channels: 1 | 2 | 3 | 4): Sharp {
  return sharp(busyPixels(channels), { raw: { width: WIDTH, height: HEIGHT, channels } });
}

/** Each kind of picture the measuring engines may be given, and whether its pixels say all a pipeline reads. */
async function pictures(): Promise<Array<{ name: string; picture: Buffer; lossless: boolean }>> {
  return [
    { name: "RGB PNG", picture: await raw(3).png().toBuffer(), lossless: true },
    { name: "interlaced RGB PNG", picture: await raw(3).png({ progressive: true }).toBuffer(), lossless: true },
    { name: "RGBA PNG", picture: await raw(4).png().toBuffer(), lossless: true },
    { name: "palette PNG with transparency", picture: await raw(4).png({ palette: true, colours: 200 }).toBuffer(), lossless: true },
    { name: "grey PNG", picture: await raw(1).toColourspace("b-w").png().toBuffer(), lossless: false },
    { name: "grey and alpha PNG", picture: await raw(2).toColourspace("b-w").png().toBuffer(), lossless: false },
    { name: "palette PNG, 8-bit indices", picture: await raw(3).png({ palette: true, colours: 200 }).toBuffer(), lossless: true },
    // 16 colours are written 4 bits an index: not 8 bits a sample, so it goes from the file.
    { name: "palette PNG, 4-bit indices", picture: await raw(3).png({ palette: true, colours: 16 }).toBuffer(), lossless: false },
    { name: "16-bit PNG", picture: await raw(3).toColourspace("rgb16").png().toBuffer(), lossless: false },
    { name: "PNG with an ICC profile", picture: await raw(3).withIccProfile("p3").png().toBuffer(), lossless: false },
    { name: "JPEG", picture: await raw(3).jpeg({ quality: 80 }).toBuffer(), lossless: false },
  ];
}

/**
 * The pipelines the engines run on a picture (pixel difference, scroll shift, SSIM, the
 * self-check's and the judge's shrunk pixels), written out here; the engines' own results
 * are compared end to end by the demo's scores before and after.
 */
const PIPELINES: Record<string, (image: Sharp) => Sharp> = {
  "colour pixels": (image) => image.removeAlpha().raw(),
  "grey pixels": (image) => image.removeAlpha().greyscale().raw(),
  "grey, cubic 32 × 32": (image) => image.removeAlpha().greyscale().resize({ width: 32, height: 32, fit: "fill", kernel: "cubic" }).raw(),
  "shrunk, filled, grey": (image) => image.resize(40, 22, { fit: "fill" }).greyscale().raw(),
  "colours shrunk": (image) => image.removeAlpha().resize(16, 9, { fit: "fill" }).raw(),
};

beforeEach(() => forgetDecodedPictures());

describe("decoded pictures", () => {
  it("says which pictures decode without loss, and refuses what is not a PNG", async () => {
    for (const { name, picture, lossless } of await pictures()) expect([name, await decodesLosslessly(picture)]).toEqual([name, lossless]);
    expect(await decodesLosslessly(Buffer.from("not a picture at all, just some words"))).toBe(false);
    const png = await raw(3).png().toBuffer();
    expect(await decodesLosslessly(png.subarray(0, 20))).toBe(false);
    // Cut off just after IHDR: sharp cannot read it.
    expect(await decodesLosslessly(png.subarray(0, 40))).toBe(false);
    // An ICC profile found after another chunk (a text chunk put in front of it).
    const withProfile = await raw(3).withIccProfile("p3").png().toBuffer();
    const text = Buffer.concat([Buffer.from([0, 0, 0, 4]), Buffer.from("tEXtnote", "latin1"), Buffer.alloc(4)]);
    expect(await decodesLosslessly(Buffer.concat([withProfile.subarray(0, 33), text, withProfile.subarray(33)]))).toBe(false);
    expect(await decodesLosslessly(Buffer.concat([png.subarray(0, 33), text, png.subarray(33)]))).toBe(true);
  });

  it("gives every pipeline the same bytes as the file would, from the decoded pixels where it may", async () => {
    for (const { name, picture } of await pictures()) {
      for (const [pipeline, run] of Object.entries(PIPELINES)) {
        const fromFile = await run(sharp(picture)).toBuffer();
        const fromMemory = await run(await pictureSharp(picture)).toBuffer();
        expect({ name, pipeline, same: fromMemory.equals(fromFile) }).toEqual({ name, pipeline, same: true });
      }
    }
  });

  it("measures a 16-bit PNG from its file: its decoded pixels would give other bytes", async () => {
    const picture = (await pictures()).find(({ name }) => name === "16-bit PNG")!.picture;
    const { data, info } = await decodedPixels(picture);
    const fromPixels = await PIPELINES["grey pixels"]!(sharp(data, { raw: info })).toBuffer();
    const fromFile = await PIPELINES["grey pixels"]!(sharp(picture)).toBuffer();
    expect(fromPixels.equals(fromFile)).toBe(false);
    expect((await PIPELINES["grey pixels"]!(await pictureSharp(picture)).toBuffer()).equals(fromFile)).toBe(true);
  });

  it("decodes the same bytes once, whichever Buffer holds them, as sharp decodes them", async () => {
    const picture = await raw(4).png().toBuffer();
    const first = await decodedPixels(picture);
    const again = await decodedPixels(Buffer.from(picture));
    expect(again).toBe(first);
    const { data, info } = await sharp(picture).raw().toBuffer({ resolveWithObject: true });
    expect(first.data.equals(data)).toBe(true);
    expect(first.info).toEqual({ width: info.width, height: info.height, channels: 4 });
  });

  it("keeps within its bound, the least recently used going first, and forgets a picture that does not decode", async () => {
    const pictureBytes = WIDTH * HEIGHT * 3;
    const memory = new DecodedPictureMemory(pictureBytes * 2);
    const [a, b, c] = await Promise.all([raw(3).png().toBuffer(), raw(3).negate().png().toBuffer(), raw(3).flip().png().toBuffer()]);
    const firstA = await memory.pixels(a);
    await memory.pixels(b);
    // a is used again, so b is the least recently used when c comes.
    expect(await memory.pixels(a)).toBe(firstA);
    await memory.pixels(c);
    await new Promise((resolve) => setImmediate(resolve));
    expect(memory.bytesHeld).toBe(pictureBytes * 2);
    expect(await memory.pixels(a)).toBe(firstA);
    const firstB = await memory.pixels(b);
    expect(firstB.data.equals(await sharp(b).raw().toBuffer())).toBe(true);
    const broken = Buffer.concat([a.subarray(0, 40), Buffer.alloc(40)]);
    const first = memory.pixels(broken);
    await expect(first).rejects.toThrow();
    // Not kept: asked again, it is decoded (and fails) again rather than answered from memory.
    const second = memory.pixels(broken);
    expect(second).not.toBe(first);
    await expect(second).rejects.toThrow();
    expect(memory.bytesHeld).toBe(pictureBytes * 2);
  });

  it("keeps a picture still being decoded, and the newest, when it makes room", async () => {
    const pictureBytes = WIDTH * HEIGHT * 3;
    const [slow, b, c] = await Promise.all([raw(3).png().toBuffer(), raw(3).negate().png().toBuffer(), raw(3).flip().png().toBuffer()]);
    const decodings = new Map<Buffer, number>();
    let finishSlow: (pixels: DecodedPixels) => void = () => undefined;
    const memory = new DecodedPictureMemory(pictureBytes, async (picture) => {
      decodings.set(picture, (decodings.get(picture) ?? 0) + 1);
      if (picture === slow) return new Promise<DecodedPixels>((resolve) => (finishSlow = resolve));
      const { data, info } = await sharp(picture).raw().toBuffer({ resolveWithObject: true });
      return { data, info: { width: info.width, height: info.height, channels: info.channels } };
    });
    const slowPixels = memory.pixels(slow);
    await memory.pixels(b);
    // c goes over the bound: b makes room, not the picture still being decoded (first in order, holding nothing yet).
    await memory.pixels(c);
    await new Promise((resolve) => setImmediate(resolve));
    expect(memory.pixels(slow)).toBe(slowPixels);
    finishSlow({ data: Buffer.alloc(pictureBytes), info: { width: WIDTH, height: HEIGHT, channels: 3 } });
    await slowPixels;
    await new Promise((resolve) => setImmediate(resolve));
    // Its pixels came last: c makes room for them, and they stay.
    expect(memory.bytesHeld).toBe(pictureBytes);
    expect(memory.pixels(slow)).toBe(slowPixels);
    await memory.pixels(b);
    expect([decodings.get(slow), decodings.get(b), decodings.get(c)]).toEqual([1, 2, 1]);
  });

  it("keys a prepared OCR crop by the pixels its PNG decodes to, taken from the pixels it was written from", async () => {
    const grey = busyPixels(1);
    const png = await prepareCrop(Buffer.from(grey), { width: WIDTH, height: HEIGHT }, 3);
    const key = await imageContentKey(png);
    // Keyed without decoding: no pixels were kept for it.
    expect(decodedPicturesHeld()).toBe(0);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    const decodedKey = createHash("sha256").update(`pixels ${info.width}x${info.height}x${info.channels} 8\n`).update(data).digest("hex");
    expect(key).toBe(decodedKey);
  });
});
