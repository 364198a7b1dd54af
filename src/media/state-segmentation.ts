/**
 * Finding a screen recording's stable states in a stream of small grey frames: where
 * the screen holds still, ignoring what a pointer and a text caret do to it.
 *
 * Each frame is compared with the first frame of the current run (its reference). The
 * pixels that differ by more than a tolerance are grouped into connected regions, and a
 * region starts a new run only if it is real content:
 *
 * - it persists: the same pixels still differ from the reference in every frame for
 *   `persistenceSec` (longer than a caret's half blink period), so a blinking caret, a
 *   flash or a pointer passing over never counts;
 * - it is not the pointer having moved: a pointer that moved leaves two small regions
 *   alike in size and shape, where it was and where it is (at rest or still moving);
 *   such pairs, and small regions at the pointer's last resting place, are ignored.
 *   A real small change (a digit, a checkbox tick) has no such twin and counts.
 *
 * A run that lasts at least `minStateSec` is a state; shorter runs are transitions
 * (animations, scrolling, a pointer passing). The segmenter is a streaming object: it
 * decides each frame once the frames `persistenceSec` after it have arrived, so memory
 * stays bounded whatever the video's length.
 */
import { BufferPool } from "./buffer-pool.ts";

export interface SegmentationSettings {
  /** Frames per second of the analysed stream. */
  fps: number;
  /** Grey levels (0–255) a pixel must move by to count as changed (video noise stays below). */
  pixelTolerance: number;
  /** Regions smaller than this many analysis pixels are noise. */
  minRegionPixels: number;
  /** Largest side, in analysis pixels, of a region that may be the pointer or a caret. */
  pointerMaxSide: number;
  /** How long a change must last to be content (a caret blinks on and off faster). */
  persistenceSec: number;
  /** Shortest run that is a state. */
  minStateSec: number;
}

export interface Run {
  /** Frame indices, inclusive. */
  firstFrame: number;
  lastFrame: number;
  /** firstFrame / fps and (lastFrame + 1) / fps. */
  startSec: number;
  endSec: number;
  /** Whether the run lasts at least minStateSec. */
  isState: boolean;
}

interface Region {
  /** Pixel indices; a view into the finder's scratch space, valid until its next call. */
  pixels: Int32Array;
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

interface PendingFrame {
  index: number;
  /** The segmenter's own copy. */
  data: Buffer;
}

/**
 * Finds the regions that changed between two frames of one size. It owns its scratch
 * buffers, reused call after call: a recording is mostly frames compared with their run's
 * reference, and allocating a mask, a stack and pixel lists for each cost more than the
 * comparing (the garbage collector's share included).
 */
class ChangedRegionFinder {
  /** Per pixel: UNCHANGED, CHANGED (not yet in a region) or TAKEN (in one); all UNCHANGED between calls. */
  private readonly state: Uint8Array;
  /** The changed pixels' indices, in order. */
  private readonly changed: Int32Array;
  private readonly stack: Int32Array;
  private readonly pixels: Int32Array;
  /** Index offsets of the 24 neighbours within reach, for pixels away from the border. */
  private readonly neighbourOffsets: Int32Array;

  constructor(
    private readonly width: number,
    private readonly height: number,
  ) {
    const size = width * height;
    this.state = new Uint8Array(size);
    this.changed = new Int32Array(size);
    this.stack = new Int32Array(size);
    this.pixels = new Int32Array(size);
    const offsets: number[] = [];
    for (let dy = -REACH; dy <= REACH; dy++) for (let dx = -REACH; dx <= REACH; dx++) if (dx !== 0 || dy !== 0) offsets.push(dy * width + dx);
    this.neighbourOffsets = Int32Array.from(offsets);
  }

  /**
   * The connected regions of pixels that differ by more than `tolerance`, of at least
   * `minPixels` pixels; pixels up to REACH apart join (the strokes of one word, a digit's
   * parts), so a change reads as the thing that changed. None when nothing differs.
   * One pass over the frame finds the changed pixels; the rest of the work is in
   * proportion to how many there are.
   */
  find(a: Uint8Array, b: Uint8Array, tolerance: number, minPixels: number): Region[] {
    const { state, changed, stack, pixels, width, height, neighbourOffsets } = this;
    const size = width * height;
    let count = 0;
    // Four pixels at a time where both frames allow it: in a screen recording most of the
    // screen decodes to the very same bytes frame after frame, and equal words need no look.
    const aligned = a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0;
    const words = aligned ? size >> 2 : 0;
    const aWords = aligned ? new Uint32Array(a.buffer, a.byteOffset, words) : NO_WORDS;
    const bWords = aligned ? new Uint32Array(b.buffer, b.byteOffset, words) : NO_WORDS;
    for (let word = 0; word < words; word++) {
      if (aWords[word] === bWords[word]) continue;
      for (let i = word << 2, end = i + 4; i < end; i++) {
        const difference = a[i]! - b[i]!;
        if (difference > tolerance || difference < -tolerance) {
          state[i] = CHANGED;
          changed[count++] = i;
        }
      }
    }
    for (let i = words << 2; i < size; i++) {
      const difference = a[i]! - b[i]!;
      if (difference > tolerance || difference < -tolerance) {
        state[i] = CHANGED;
        changed[count++] = i;
      }
    }
    const regions: Region[] = [];
    let stored = 0;
    for (let seed = 0; seed < count; seed++) {
      const start = changed[seed]!;
      if (state[start] !== CHANGED) continue;
      const regionStart = stored;
      let minX = width;
      let minY = height;
      let maxX = 0;
      let maxY = 0;
      let top = 0;
      stack[top++] = start;
      state[start] = TAKEN;
      while (top > 0) {
        const at = stack[--top]!;
        const x = at % width;
        const y = (at - x) / width;
        pixels[stored++] = at;
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
        if (x >= REACH && x < width - REACH && y >= REACH && y < height - REACH) {
          for (let k = 0; k < neighbourOffsets.length; k++) {
            const next = at + neighbourOffsets[k]!;
            if (state[next] === CHANGED) {
              state[next] = TAKEN;
              stack[top++] = next;
            }
          }
          continue;
        }
        for (let dy = -REACH; dy <= REACH; dy++) {
          const ny = y + dy;
          if (ny < 0 || ny >= height) continue;
          for (let dx = -REACH; dx <= REACH; dx++) {
            const nx = x + dx;
            if (nx < 0 || nx >= width) continue;
            const next = ny * width + nx;
            if (state[next] === CHANGED) {
              state[next] = TAKEN;
              stack[top++] = next;
            }
          }
        }
      }
      if (stored - regionStart >= minPixels) regions.push({ pixels: pixels.subarray(regionStart, stored), minX, minY, maxX, maxY });
      else stored = regionStart;
    }
    for (let seed = 0; seed < count; seed++) state[changed[seed]!] = UNCHANGED;
    return regions;
  }
}

/** The word views of frames that cannot be read four pixels at a time (a view must start at a multiple of 4). */
const NO_WORDS = new Uint32Array(0);

const UNCHANGED = 0;
const CHANGED = 1;
const TAKEN = 2;

/** Changed pixels this close (in each direction) belong to one region. */
const REACH = 2;

const sideOf = (region: Region) => Math.max(region.maxX - region.minX + 1, region.maxY - region.minY + 1);

export class StateSegmenter {
  private readonly settings: SegmentationSettings;
  private readonly width: number;
  private readonly height: number;
  /** Frames after the one being decided that persistence needs to see. */
  private readonly lookahead: number;
  private readonly minStateFrames: number;
  private readonly finder: ChangedRegionFinder;
  /** The copies of pushed frames it keeps (reference, pending, recent), each given back once dropped. */
  private readonly copies: BufferPool;
  private reference: Buffer | undefined;
  private runStart = 0;
  private lastDecided = -1;
  private readonly pending: PendingFrame[] = [];
  /** The last frames decided to continue the current run (for the end-of-video blink check). */
  private recent: Buffer[] = [];
  /** Where the pointer was last seen resting (a box in analysis pixels), if known. */
  private pointer: { minX: number; minY: number; maxX: number; maxY: number } | undefined;
  private finished = false;

  constructor(width: number, height: number, settings: SegmentationSettings) {
    this.settings = settings;
    this.width = width;
    this.height = height;
    this.lookahead = Math.max(1, Math.round(settings.persistenceSec * settings.fps));
    this.minStateFrames = Math.max(1, Math.round(settings.minStateSec * settings.fps));
    this.finder = new ChangedRegionFinder(width, height);
    // Held at once: the reference, the look-ahead, the recent frames, and the one arriving.
    this.copies = new BufferPool(width * height, this.lookahead * 3 + 2);
  }

  /** Adds the next frame (copied: the caller may reuse `data`); returns the runs that ended (decided) because of it. */
  push(data: Uint8Array): Run[] {
    if (this.finished) throw new Error("StateSegmenter: push after finish");
    if (data.length !== this.width * this.height) throw new Error(`StateSegmenter: frame of ${data.length} bytes, expected ${this.width * this.height}`);
    const copy = this.copies.take();
    copy.set(data);
    this.pending.push({ index: this.lastDecided + 1 + this.pending.length, data: copy });
    const closed: Run[] = [];
    while (this.pending.length > this.lookahead) {
      const run = this.decideOldest();
      if (run) closed.push(run);
    }
    return closed;
  }

  /** The end of the video: decides the frames left and closes the last run. */
  finish(): Run[] {
    this.finished = true;
    const closed: Run[] = [];
    while (this.pending.length > 0) {
      const run = this.decideOldest();
      if (run) closed.push(run);
    }
    if (this.lastDecided >= 0) closed.push(this.runOf(this.runStart, this.lastDecided));
    return closed;
  }

  private runOf(first: number, last: number): Run {
    const { fps } = this.settings;
    return { firstFrame: first, lastFrame: last, startSec: first / fps, endSec: (last + 1) / fps, isState: last - first + 1 >= this.minStateFrames };
  }

  /** Decides the oldest pending frame: does it continue the current run or start a new one? */
  private decideOldest(): Run | undefined {
    const frame = this.pending.shift();
    if (!frame) return undefined;
    this.lastDecided = frame.index;
    if (!this.reference) {
      this.reference = frame.data;
      this.runStart = frame.index;
      return undefined;
    }
    if (!this.startsNewRun(this.reference, frame.data)) {
      this.recent.push(frame.data);
      if (this.recent.length > this.lookahead * 2) this.dropped(this.recent.shift()!);
      return undefined;
    }
    const ended = this.runOf(this.runStart, frame.index - 1);
    this.dropped(this.reference);
    for (const old of this.recent) this.dropped(old);
    this.reference = frame.data;
    this.runStart = frame.index;
    this.recent = [];
    return ended;
  }

  private startsNewRun(reference: Uint8Array, current: Uint8Array): boolean {
    const { pixelTolerance, minRegionPixels } = this.settings;
    const regions = this.finder.find(reference, current, pixelTolerance, minRegionPixels);
    if (regions.length === 0) return false;
    // A region is content unless it goes away: if, in some frame of the window that follows,
    // its pixels are mostly back to the reference, it was transient (a caret's blink, a pointer
    // passing, a flash). Settled or still changing (an animation, scrolling) is content. A small
    // region whose change keeps spreading around it is a pointer gliding on, not content yet.
    const margin = this.settings.pointerMaxSide;
    const differs = (region: Region, frame: Uint8Array): boolean => {
      let still = 0;
      for (const at of region.pixels) if (Math.abs(reference[at]! - frame[at]!) > pixelTolerance) still += 1;
      return still >= region.pixels.length / 2;
    };
    const small = (region: Region) => sideOf(region) <= this.settings.pointerMaxSide;
    const spreads = (region: Region, frame: Uint8Array): boolean => {
      let around = 0;
      const [x0, x1] = [Math.max(0, region.minX - margin), Math.min(this.width - 1, region.maxX + margin)];
      const [y0, y1] = [Math.max(0, region.minY - margin), Math.min(this.height - 1, region.maxY + margin)];
      for (let y = y0; y <= y1; y++) {
        for (let x = x0; x <= x1; x++) {
          const at = y * this.width + x;
          if (Math.abs(reference[at]! - frame[at]!) > pixelTolerance) around += 1;
        }
      }
      return around > region.pixels.length * 1.5 + 2;
    };
    const persists = (region: Region): boolean => this.pending.every((frame) => differs(region, frame.data) && !(small(region) && spreads(region, frame.data)));
    // Near the end the window is cut short: a change seen before in this run and gone again
    // (a caret blinking) cannot be confirmed by persistence, so its history decides.
    const windowCut = this.pending.length < this.lookahead;
    const blinked = (region: Region) => windowCut && this.recent.some((frame) => differs(region, frame));
    const persistent = regions.filter((region) => persists(region) && !blinked(region));
    if (persistent.length === 0) return false;
    const content = this.withoutPointer(persistent, regions);
    return content.length > 0;
  }

  /**
   * Drops the persistent regions that are the pointer. A pointer that moved leaves a
   * region where it was (persistent) and makes one where it is (still moving, or at
   * rest): two small regions alike in size and shape. Its last resting place is
   * remembered, so small changes right there (jitter) are the pointer too.
   */
  private withoutPointer(persistent: Region[], all: Region[]): Region[] {
    const small = (region: Region) => sideOf(region) <= this.settings.pointerMaxSide;
    const margin = this.settings.pointerMaxSide;
    const pointer = this.pointer;
    const nearPointer = (region: Region) =>
      pointer !== undefined &&
      region.maxX >= pointer.minX - margin &&
      region.minX <= pointer.maxX + margin &&
      region.maxY >= pointer.minY - margin &&
      region.minY <= pointer.maxY + margin;
    const ignored = new Set<Region>();
    const isPersistent = new Set(persistent);
    const smallNow = all.filter(small);
    // Where the pointer is now: a small region at its known resting place, else one still moving.
    for (const left of persistent.filter(small)) {
      if (ignored.has(left)) continue;
      const partners = smallNow.filter((other) => other !== left && !ignored.has(other) && this.alike(left, other));
      const arrived = partners.find(nearPointer) ?? partners.find((other) => !isPersistent.has(other)) ?? partners[0];
      if (!arrived) continue;
      ignored.add(left);
      ignored.add(arrived);
      this.pointer = { minX: arrived.minX, minY: arrived.minY, maxX: arrived.maxX, maxY: arrived.maxY };
    }
    if (pointer) for (const region of persistent) if (small(region) && nearPointer(region)) ignored.add(region);
    return persistent.filter((region) => !ignored.has(region));
  }

  /** A frame copy nothing refers to any more. */
  private dropped(frame: Buffer): void {
    this.copies.give(frame);
  }

  /** Two regions alike enough in size and shape to be one pointer in two places. */
  private alike(a: Region, b: Region): boolean {
    const sizeRatio = a.pixels.length / b.pixels.length;
    if (sizeRatio < 0.5 || sizeRatio > 2) return false;
    const [aw, ah] = [a.maxX - a.minX + 1, a.maxY - a.minY + 1];
    const [bw, bh] = [b.maxX - b.minX + 1, b.maxY - b.minY + 1];
    return Math.abs(aw - bw) <= Math.max(2, aw * 0.5) && Math.abs(ah - bh) <= Math.max(2, ah * 0.5);
  }
}
