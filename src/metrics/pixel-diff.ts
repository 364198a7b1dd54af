/**
 * How much of the screen changed between two screenshots: pixels whose colour moved
 * by more than a small tolerance in any channel (ignores PNG encoding noise and
 * sub-pixel antialiasing, counts a toggled checkbox or a typed letter).
 */
import { pictureSharp } from "./decoded-pictures.ts";
import { oncePerBuffer } from "./once-per-buffer.ts";

/** Per-channel difference (0–255) below which a pixel counts as unchanged. */
export const PIXEL_TOLERANCE = 24;

/** Fewer changed pixels than this is "nothing happened" (a typed letter changes ~50). */
export const MIN_CHANGED_PIXELS = 40;

export interface PixelDiff {
  changedPixels: number;
  totalPixels: number;
  changedFraction: number;
}

async function rgb(png: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await (await pictureSharp(png)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Size of the cells changed pixels are grouped in; gaps smaller than a cell join regions. */
const CELL = 12;

/** Where two pictures differ: the changed pixels counted, and which cells of the grid hold any. */
interface ChangeGrid {
  width: number;
  height: number;
  /** The pictures differ in size: every pixel counts as changed. */
  resized: boolean;
  changedPixels: number;
  columns: number;
  rows: number;
  /** 1 where a cell holds a changed pixel. */
  cells: Uint8Array;
}

async function measureChange(before: Buffer, after: Buffer): Promise<ChangeGrid> {
  const [a, b] = await Promise.all([rgb(before), rgb(after)]);
  const columns = Math.ceil(b.width / CELL);
  const rows = Math.ceil(b.height / CELL);
  const cells = new Uint8Array(columns * rows);
  if (a.width !== b.width || a.height !== b.height) {
    return { width: b.width, height: b.height, resized: true, changedPixels: b.width * b.height, columns, rows, cells };
  }
  let changedPixels = 0;
  for (let y = 0; y < b.height; y++) {
    for (let x = 0; x < b.width; x++) {
      const offset = (y * b.width + x) * 3;
      if (
        Math.abs((a.data[offset] ?? 0) - (b.data[offset] ?? 0)) > PIXEL_TOLERANCE ||
        Math.abs((a.data[offset + 1] ?? 0) - (b.data[offset + 1] ?? 0)) > PIXEL_TOLERANCE ||
        Math.abs((a.data[offset + 2] ?? 0) - (b.data[offset + 2] ?? 0)) > PIXEL_TOLERANCE
      ) {
        changedPixels += 1;
        cells[Math.floor(y / CELL) * columns + Math.floor(x / CELL)] = 1;
      }
    }
  }
  return { width: b.width, height: b.height, resized: false, changedPixels, columns, rows, cells };
}

/**
 * The change grid of a picture pair, kept while both pictures are in use: the judge asks for
 * the same pair's difference and regions several times (each reading pass has its own
 * margin), and each time decoded both pictures again.
 */
const changesFrom = new WeakMap<Buffer, (after: Buffer) => Promise<ChangeGrid>>();

function changeGrid(before: Buffer, after: Buffer): Promise<ChangeGrid> {
  let changeTo = changesFrom.get(before);
  if (!changeTo) {
    changeTo = oncePerBuffer((other) => measureChange(before, other));
    changesFrom.set(before, changeTo);
  }
  return changeTo(after);
}

export async function pixelDiff(before: Buffer, after: Buffer): Promise<PixelDiff> {
  const { width, height, changedPixels } = await changeGrid(before, after);
  const totalPixels = width * height;
  return { changedPixels, totalPixels, changedFraction: totalPixels > 0 ? changedPixels / totalPixels : 0 };
}

export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * The boxes where the screen changed, largest first: changed pixels grouped in cells,
 * touching cells joined, each box padded a little (text next to a changed number is
 * usually part of it). Empty when nothing changed.
 */
export async function changedRegions(before: Buffer, after: Buffer, options: { padding?: number; max?: number } = {}): Promise<Region[]> {
  const grid = await changeGrid(before, after);
  if (grid.resized) return [{ left: 0, top: 0, width: grid.width, height: grid.height }];
  const { columns, rows, cells: changed, width, height } = grid;
  const seen = new Uint8Array(columns * rows);
  const boxes: Array<Region & { cells: number }> = [];
  for (let start = 0; start < changed.length; start++) {
    if (!changed[start] || seen[start]) continue;
    let [minX, minY, maxX, maxY, cells] = [columns, rows, 0, 0, 0];
    const stack = [start];
    seen[start] = 1;
    while (stack.length > 0) {
      const cell = stack.pop() ?? 0;
      const cx = cell % columns;
      const cy = Math.floor(cell / columns);
      [minX, minY, maxX, maxY, cells] = [Math.min(minX, cx), Math.min(minY, cy), Math.max(maxX, cx), Math.max(maxY, cy), cells + 1];
      // Neighbours one cell away in every direction, diagonals included.
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const nx = cx + dx;
          const ny = cy + dy;
          if (nx < 0 || ny < 0 || nx >= columns || ny >= rows) continue;
          const next = ny * columns + nx;
          if (changed[next] && !seen[next]) {
            seen[next] = 1;
            stack.push(next);
          }
        }
      }
    }
    const padding = options.padding ?? 16;
    const left = Math.max(0, minX * CELL - padding);
    const top = Math.max(0, minY * CELL - padding);
    const right = Math.min(width, (maxX + 1) * CELL + padding);
    const bottom = Math.min(height, (maxY + 1) * CELL + padding);
    boxes.push({ left, top, width: right - left, height: bottom - top, cells });
  }
  return boxes
    .sort((x, y) => y.cells - x.cells)
    .slice(0, options.max ?? 6)
    .map(({ left, top, width, height }) => ({ left, top, width, height }));
}
