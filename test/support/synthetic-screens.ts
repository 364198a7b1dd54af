/**
 * Synthetic screen recordings for media tests: a page-like picture (header bar, text
 * lines, a text field, a small seven-segment counter) drawn frame by frame, with an
 * optional blinking caret and a cursor dot like the recorder's, encoded to H.264 by the
 * project's own encoder.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { encodeFramesToMp4 } from "../../src/media/encode.ts";
import { findFfmpeg } from "../../src/setup/find-tools.ts";

export const SCREEN_WIDTH = 640;
export const SCREEN_HEIGHT = 360;
const W = SCREEN_WIDTH;
const H = SCREEN_HEIGHT;

export interface Scene {
  caret?: boolean;
  /** Cursor dot centre, or none. */
  dot?: { x: number; y: number };
  /** Which of two seven-segment digits the counter shows. */
  digit?: 7 | 8;
}

/** A page-like picture: header bar, text lines, a field with an optional caret, a small counter digit. */
export function sceneSvg(scene: Scene): string {
  const lines = [0, 1, 2, 3, 4].map((row) => `<rect x="40" y="${110 + row * 30}" width="${420 - row * 40}" height="10" fill="#555"/>`).join("");
  const seven =
    scene.digit === 8
      ? `<rect x="560" y="40" width="24" height="4" fill="#111"/><rect x="560" y="58" width="24" height="4" fill="#111"/>` +
        `<rect x="560" y="76" width="24" height="4" fill="#111"/><rect x="556" y="40" width="4" height="40" fill="#111"/>` +
        `<rect x="584" y="40" width="4" height="40" fill="#111"/>`
      : `<rect x="560" y="40" width="24" height="4" fill="#111"/><rect x="584" y="40" width="4" height="40" fill="#111"/>`;
  const caret = scene.caret ? `<rect x="62" y="278" width="2" height="22" fill="#000"/>` : "";
  const dot = scene.dot ? `<circle cx="${scene.dot.x}" cy="${scene.dot.y}" r="10" fill="rgba(255,60,60,0.75)" stroke="#fff" stroke-width="2"/>` : "";
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect width="${W}" height="${H}" fill="#fafafa"/>` +
    `<rect x="0" y="0" width="${W}" height="60" fill="#2a6df4"/>${lines}` +
    `<rect x="40" y="270" width="300" height="38" fill="#fff" stroke="#999"/>${caret}${scene.digit ? seven : ""}${dot}</svg>`
  );
}

/** Frames every 100 ms from `sceneAt(t)`, encoded as a 10 fps H.264 MP4 by the project's own encoder. */
export async function makeScreenVideo(dir: string, name: string, seconds: number, sceneAt: (t: number) => Scene): Promise<string> {
  const frameDir = path.join(dir, `${name}-frames`);
  fs.mkdirSync(frameDir, { recursive: true });
  const frames: Array<{ file: string; timeSec: number }> = [];
  const count = Math.max(1, Math.round(seconds * 10));
  for (let i = 0; i < count; i++) {
    const file = path.join(frameDir, `${String(i).padStart(4, "0")}.png`);
    await sharp(Buffer.from(sceneSvg(sceneAt(i / 10))))
      .png()
      .toFile(file);
    frames.push({ file, timeSec: i / 10 });
  }
  const out = path.join(dir, `${name}.mp4`);
  await encodeFramesToMp4(frames, { ffmpegPath: findFfmpeg()!.path, outFile: out, endSec: seconds, width: W, height: H, fps: 10 });
  return out;
}
