/**
 * The segmenter keeps its own copies of the frames it still needs, so the video-state
 * pass can read every grey frame into one buffer: the runs found must not depend on
 * whether the caller reuses its buffer.
 */
import { describe, expect, it } from "vitest";
import { type Run, type SegmentationSettings, StateSegmenter } from "../../src/media/state-segmentation.ts";

// 1,230 pixels: not a whole number of four-pixel words, so the last two are compared one by one.
const WIDTH = 41;
const HEIGHT = 30;
const SETTINGS: SegmentationSettings = { fps: 5, pixelTolerance: 12, minRegionPixels: 4, pointerMaxSide: 3, persistenceSec: 0.4, minStateSec: 0.4 };

/** A white screen; from `panelFrom` on, a dark panel stands in its middle. */
function frame(index: number, panelFrom: number): Uint8Array {
  const data = new Uint8Array(WIDTH * HEIGHT).fill(240);
  if (index >= panelFrom) for (let y = 10; y < 20; y++) for (let x = 10; x < 30; x++) data[y * WIDTH + x] = 30;
  return data;
}

function segment(frames: Uint8Array[], reuseOneBuffer: boolean): Run[] {
  const segmenter = new StateSegmenter(WIDTH, HEIGHT, SETTINGS);
  const shared = new Uint8Array(WIDTH * HEIGHT);
  const runs: Run[] = [];
  for (const data of frames) {
    if (reuseOneBuffer) {
      shared.set(data);
      runs.push(...segmenter.push(shared));
    } else {
      runs.push(...segmenter.push(data.slice()));
    }
  }
  runs.push(...segmenter.finish());
  return runs;
}

describe("state segmenter", () => {
  it("finds the same runs whether the caller reuses one buffer for every frame or not", () => {
    const frames = Array.from({ length: 12 }, (_, index) => frame(index, 6));
    const fresh = segment(frames, false);
    expect(fresh.map((run) => [run.firstFrame, run.lastFrame, run.isState])).toEqual([
      [0, 5, true],
      [6, 11, true],
    ]);
    expect(segment(frames, true)).toEqual(fresh);
  });

  it("sees a change confined to the pixels after the last whole word, and frames that start at any offset", () => {
    // The panel is the frame's last two pixels (row 29, columns 39 and 40) and the row above's end.
    const corner = (index: number): Uint8Array => {
      const data = new Uint8Array(WIDTH * HEIGHT).fill(240);
      if (index >= 6) for (const at of [WIDTH * HEIGHT - 2, WIDTH * HEIGHT - 1, WIDTH * (HEIGHT - 1) - 2, WIDTH * (HEIGHT - 1) - 1]) data[at] = 20;
      return data;
    };
    const segmenter = new StateSegmenter(WIDTH, HEIGHT, { ...SETTINGS, minRegionPixels: 4 });
    const runs: Run[] = [];
    for (let index = 0; index < 12; index++) {
      // Each frame handed over as a view one byte into a larger buffer.
      const holder = new Uint8Array(WIDTH * HEIGHT + 1);
      holder.set(corner(index), 1);
      runs.push(...segmenter.push(holder.subarray(1)));
    }
    runs.push(...segmenter.finish());
    expect(runs.map((run) => [run.firstFrame, run.lastFrame])).toEqual([
      [0, 5],
      [6, 11],
    ]);
  });
});
