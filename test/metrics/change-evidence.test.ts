/** Colour evidence of a change (src/metrics/change-evidence.ts): names of colours, and the colours a change brought. */
import { describe, expect, it } from "vitest";
import { colourChange, colourName, coloursGained } from "../../src/metrics/change-evidence.ts";

/** An RGB picture (3 bytes a pixel) of `count` pixels of one colour. */
const picture = (count: number, rgb: [number, number, number]) => Buffer.from(Array.from({ length: count }, () => rgb).flat());

describe("colour names", () => {
  it("names nearly colourless pixels by lightness and others by hue, light tints keeping their hue", () => {
    expect(colourName(255, 255, 255)).toBe("white");
    expect(colourName(20, 20, 24)).toBe("black");
    expect(colourName(130, 128, 126)).toBe("gray");
    expect(colourName(210, 30, 30)).toBe("red");
    expect(colourName(170, 230, 180)).toBe("green");
    expect(colourName(60, 110, 230)).toBe("blue");
    expect(colourName(250, 160, 40)).toBe("orange");
    expect(colourName(110, 60, 20)).toBe("brown");
    expect(colourName(230, 90, 170)).toBe("pink");
    expect(colourName(130, 60, 200)).toBe("purple");
    expect(colourName(245, 215, 40)).toBe("yellow");
    expect(colourName(20, 150, 150)).toBe("teal");
  });
});

describe("the colours a change brought", () => {
  it("counts only the pixels that changed, before and after, and reports colours whose share grew", () => {
    const unchanged = picture(100, [255, 255, 255]);
    const before = Buffer.concat([unchanged, picture(50, [210, 30, 30]), picture(50, [255, 255, 255])]);
    const after = Buffer.concat([unchanged, picture(50, [30, 170, 60]), picture(50, [30, 170, 60])]);
    const change = colourChange(before, after);
    expect(change.changedPixels).toBe(100);
    expect(change.before).toEqual({ red: 50, white: 50 });
    expect(change.after).toEqual({ green: 100 });
    expect(coloursGained(change, 0.25)).toEqual(["green"]);
  });

  it("a colour that only moves brings nothing; pictures of different sizes compare as no change", () => {
    const before = Buffer.concat([picture(10, [40, 100, 230]), picture(10, [255, 255, 255])]);
    const after = Buffer.concat([picture(10, [255, 255, 255]), picture(10, [40, 100, 230])]);
    expect(coloursGained(colourChange(before, after), 0.25)).toEqual([]);
    expect(colourChange(before, picture(3, [0, 0, 0])).changedPixels).toBe(0);
  });
});
