import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { buildContactSheets, contactSheetTileBox } from "../../src/media/contact-sheet.ts";
import { concatList, encodeFramesToMp4 } from "../../src/media/encode.ts";
import { probeVideo } from "../../src/media/probe.ts";
import { requireTools } from "../../src/setup/find-tools.ts";
import { makeScratchDir } from "../support/recorder-fixtures.ts";

const scratch = makeScratchDir("media");
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function solid(file: string, width: number, height: number, colour: string): Promise<string> {
  // The file's extension picks the format (PNG or JPEG, as a screencast writes).
  await sharp({ create: { width, height, channels: 3, background: colour } }).toFile(file);
  return file;
}

describe("encodeFramesToMp4", () => {
  it("holds each frame until the next and the last one until the end, as constant-rate H.264", async () => {
    const red = await solid(path.join(scratch, "red.png"), 320, 240, "#ff0000");
    const blue = await solid(path.join(scratch, "blue.png"), 320, 240, "#0000ff");
    // Frames at 100.0 s and 101.5 s, recording stopped at 103.0 s: 3 s of video, switch at 1.5 s.
    const frames = [
      { file: red, timeSec: 100 },
      { file: blue, timeSec: 101.5 },
    ];
    expect(concatList(frames, 103)).toContain("duration 1.500000");
    const out = path.join(scratch, "out.mp4");
    await encodeFramesToMp4(frames, { ffmpegPath: requireTools().ffmpeg.path, outFile: out, endSec: 103, width: 320, height: 240, fps: 10 });
    const info = await probeVideo(out);
    expect(info.codec).toBe("h264");
    expect(info.pixFmt).toBe("yuv420p");
    expect([info.width, info.height, info.fps]).toEqual([320, 240, 10]);
    expect(info.durationSec).toBeCloseTo(3, 1);
    expect(info.frameCount).toBe(30);
    // The colour at 1 s is red, at 2 s blue.
    const grab = async (second: number): Promise<number[]> => {
      const png = path.join(scratch, `at-${second}.png`);
      const { spawnSync } = await import("node:child_process");
      spawnSync(requireTools().ffmpeg.path, ["-v", "error", "-y", "-ss", String(second), "-i", out, "-frames:v", "1", png]);
      const { data } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      return [data[0]!, data[2]!];
    };
    const [redAt1, blueAt1] = await grab(1);
    const [redAt2, blueAt2] = await grab(2);
    expect(redAt1).toBeGreaterThan(200);
    expect(blueAt1).toBeLessThan(60);
    expect(redAt2).toBeLessThan(60);
    expect(blueAt2).toBeGreaterThan(200);
  });

  it("keeps a frame that came at another size where it belongs on the timeline, scaled to the others' size", async () => {
    // A screencast can deliver a frame at half size among full-size ones; ffmpeg's concat demuxer
    // dropped such a frame and shifted the ones after it.
    const frames = [
      { file: await solid(path.join(scratch, "first.jpg"), 320, 240, "#ff0000"), timeSec: 10 },
      { file: await solid(path.join(scratch, "small.jpg"), 160, 120, "#0000ff"), timeSec: 11 },
      { file: await solid(path.join(scratch, "third.jpg"), 320, 240, "#00ff00"), timeSec: 12 },
      { file: await solid(path.join(scratch, "fourth.jpg"), 320, 240, "#ff0000"), timeSec: 13 },
    ];
    const out = path.join(scratch, "mixed.mp4");
    await encodeFramesToMp4(frames, { ffmpegPath: requireTools().ffmpeg.path, outFile: out, endSec: 14, width: 320, height: 240, fps: 10 });
    const info = await probeVideo(out);
    expect(info.durationSec).toBeCloseTo(4, 1);
    const colourAt = async (second: number): Promise<string> => {
      const png = path.join(scratch, `mixed-${second}.png`);
      const { spawnSync } = await import("node:child_process");
      spawnSync(requireTools().ffmpeg.path, ["-v", "error", "-y", "-ss", String(second), "-i", out, "-frames:v", "1", png]);
      const { channels } = await sharp(png).stats();
      const [red, green, blue] = channels.map((channel) => channel.mean);
      return red! > 150 ? "red" : green! > 150 ? "green" : blue! > 150 ? "blue" : "other";
    };
    expect([await colourAt(0.5), await colourAt(1.5), await colourAt(2.5), await colourAt(3.5)]).toEqual(["red", "blue", "green", "red"]);
    expect(fs.readdirSync(scratch).filter((name) => name.includes("mixed.mp4."))).toEqual([]);
  });

  it("refuses to encode nothing", async () => {
    await expect(
      encodeFramesToMp4([], { ffmpegPath: requireTools().ffmpeg.path, outFile: path.join(scratch, "none.mp4"), endSec: 1, width: 320, height: 240 }),
    ).rejects.toThrow(/no frames were captured/);
  });
});

describe("buildContactSheets", () => {
  it("puts 16 tiles on a 1280 px sheet and starts a new sheet after that", async () => {
    const assets = [];
    for (let index = 1; index <= 18; index++) {
      const name = `${String(index).padStart(3, "0")}.png`;
      assets.push({ name, file: await solid(path.join(scratch, name), 40 + index * 10, 30 + index * 5, `#${(index * 13).toString(16).padStart(2, "0")}8040`) });
    }
    const sheets = await buildContactSheets(assets);
    expect(sheets).toHaveLength(2);
    const [first, second] = await Promise.all(sheets.map((png) => sharp(png).metadata()));
    expect(first!.width).toBe(1280);
    expect(second!.width).toBe(1280);
    expect(second!.height).toBeLessThan(first!.height!); // 2 tiles need one row only
    // Every tile of the second sheet holds its image: the pixel at the tile centre is the asset's colour.
    const box = contactSheetTileBox(1);
    const { data, info } = await sharp(sheets[1]!).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number): number[] => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    expect(at(box.left + Math.floor(box.width / 2), box.top + Math.floor(box.imageHeight / 2))).toEqual([(18 * 13) & 0xff, 0x80, 0x40]);
    // The empty third slot stays white.
    const empty = contactSheetTileBox(2);
    expect(at(empty.left + 5, empty.top + 5)).toEqual([255, 255, 255]);
  });

  it("draws a card for a video asset instead of failing", async () => {
    const video = path.join(scratch, "001.mp4");
    fs.writeFileSync(video, "not decoded by sharp");
    const sheets = await buildContactSheets([{ name: "001.mp4", file: video }]);
    expect(sheets).toHaveLength(1);
  });

  it("makes no sheet for no assets", async () => {
    expect(await buildContactSheets([])).toEqual([]);
  });
});
