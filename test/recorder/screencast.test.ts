import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { sharedBrowser } from "../../src/browser/launch.ts";
import { startScreencast } from "../../src/recorder/screencast.ts";
import { makeScratchDir } from "../support/recorder-fixtures.ts";

const scratch = makeScratchDir("screencast");
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const size = { width: 320, height: 240 };

/** The mean red and blue of a frame file. */
async function redAndBlue(file: string): Promise<[number, number]> {
  const { channels } = await sharp(file).stats();
  return [channels[0]!.mean, channels[2]!.mean];
}

describe("the recorder's screencast", () => {
  it("keeps a picture taken while its frames were suppressed, at the time it was taken, as a frame of the video", async () => {
    const browser = await sharedBrowser();
    const context = await browser.newContext({ viewport: size });
    try {
      const page = await context.newPage();
      await page.setContent("<body style='margin:0;background:#0000ff'></body>");
      const screencast = await startScreencast(context, page, path.join(scratch, "frames"), size);
      // A state that comes and is pictured while frames are dropped (a checkpoint's cursor-less moment).
      screencast.suppress(true);
      const from = Date.now() / 1000;
      await page.evaluate(() => {
        document.body.style.background = "#ff0000";
      });
      screencast.addPicture(await page.screenshot());
      const to = Date.now() / 1000;
      screencast.suppress(false);
      const { frames } = await screencast.stop();

      const added = frames.filter((frame) => frame.timeSec >= from && frame.timeSec <= to);
      expect(added).toHaveLength(1);
      expect(path.extname(added[0]!.file)).toBe(".jpg");
      const [red, blue] = await redAndBlue(added[0]!.file);
      expect(red).toBeGreaterThan(200);
      expect(blue).toBeLessThan(60);
    } finally {
      await context.close();
    }
  });

  it("adds nothing once stopped", async () => {
    const browser = await sharedBrowser();
    const context = await browser.newContext({ viewport: size });
    try {
      const page = await context.newPage();
      await page.setContent("<body style='background:#00ff00'></body>");
      const screencast = await startScreencast(context, page, path.join(scratch, "stopped"), size);
      const picture = await page.screenshot();
      const { frames } = await screencast.stop();
      const count = frames.length;
      screencast.addPicture(picture);
      expect(frames).toHaveLength(count);
    } finally {
      await context.close();
    }
  });
});
