import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { frameBudget, resizeToMaxSide, selectImages } from "../../src/media/images.ts";

function solidPng(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .png()
    .toBuffer();
}

describe("resizeToMaxSide", () => {
  it("shrinks the longer side to the limit, keeping the aspect ratio", async () => {
    const resized = await resizeToMaxSide(await solidPng(1600, 900), 1000);
    const { width, height, format } = await sharp(resized).metadata();
    expect([width, height, format]).toEqual([1000, 563, "png"]);
    const portrait = await sharp(await resizeToMaxSide(await solidPng(300, 1200), 600)).metadata();
    expect([portrait.width, portrait.height]).toEqual([150, 600]);
  });

  it("returns an image already within the limit unchanged", async () => {
    const small = await solidPng(640, 360);
    expect(await resizeToMaxSide(small, 1000)).toBe(small);
  });
});

describe("selectImages", () => {
  const frames = Array.from({ length: 64 }, (_, i) => `frame-${i}`);

  it("puts sheets first and lets frames fill what the image cap leaves", () => {
    const selection = selectImages({ sheets: ["s1", "s2"], frames, maxImages: 70, maxFrames: 64 });
    expect(selection.sheets).toEqual(["s1", "s2"]);
    expect(selection.frames).toEqual(frames);
    const tight = selectImages({ sheets: ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"], frames, maxImages: 70, maxFrames: 64 });
    expect(tight.frames).toHaveLength(62);
    expect(tight.framesDropped).toBe(2);
  });

  it("thins frames evenly, first frame kept, under a small preset cap", () => {
    const selection = selectImages({ sheets: ["s1"], frames, maxImages: 20, maxFrames: 20 });
    expect(selection.frames).toHaveLength(19);
    expect(selection.frames[0]).toBe("frame-0");
    expect(selection.frames[1]).toBe("frame-3");
    expect(selection.frames.at(-1)).toBe("frame-60");
    const byFrameCap = selectImages({ sheets: [], frames, maxImages: 70, maxFrames: 16 });
    expect(byFrameCap.frames).toEqual(Array.from({ length: 16 }, (_, i) => `frame-${i * 4}`));
  });

  it("refuses a task whose sheets alone exceed the image cap", () => {
    const sheets = ["a", "b", "c"];
    expect(() => selectImages({ sheets, frames, maxImages: 2, maxFrames: 64 })).toThrow(IwrError);
    expect(() => frameBudget(3, { maxImages: 2, maxFrames: 64 })).toThrow(/3 asset sheets exceed the model's image cap of 2/);
    expect(frameBudget(2, { maxImages: 2, maxFrames: 64 })).toBe(0);
  });
});
