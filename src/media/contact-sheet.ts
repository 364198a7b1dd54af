/**
 * Contact sheets of a task's assets (`stitched_assets/stitched_image_<n>.png`): a grid
 * of tiles, each the asset scaled to fit above its file name. Models read the names
 * off these sheets to reference assets, so the labels must stay legible at the size
 * the model receives: sheets are at most 1280 px wide and the label font is large.
 * Labels are drawn as SVG text composited by sharp (librsvg), no canvas needed.
 */
import path from "node:path";
import sharp, { type OverlayOptions } from "sharp";
import { log } from "../log/logger.ts";

const logger = log("media");

export interface ContactSheetAsset {
  /** The label: the asset's (anonymous) file name, e.g. `003.png`. */
  readonly name: string;
  readonly file: string;
}

export interface ContactSheetOptions {
  /** Sheet width in px (every sheet has it; the last one may be shorter). */
  readonly sheetWidth?: number;
  readonly columns?: number;
  readonly rowsPerSheet?: number;
  /** Label text size in px. */
  readonly labelSize?: number;
  readonly padding?: number;
}

const DEFAULTS = { sheetWidth: 1280, columns: 4, rowsPerSheet: 4, labelSize: 22, padding: 12 } as const;

const MAX_UPSCALE = 4;

/** Extensions sharp cannot decode; their tiles show a plain "video" card instead. */
const VIDEO_EXTENSIONS = new Set([".mp4", ".webm", ".mov", ".m4v", ".ogv", ".ogg"]);

interface Layout {
  readonly columns: number;
  readonly rowsPerSheet: number;
  readonly sheetWidth: number;
  readonly padding: number;
  readonly labelSize: number;
  readonly tileWidth: number;
  readonly imageHeight: number;
  readonly labelHeight: number;
}

function layoutFor(options: ContactSheetOptions): Layout {
  const columns = options.columns ?? DEFAULTS.columns;
  const sheetWidth = options.sheetWidth ?? DEFAULTS.sheetWidth;
  const padding = options.padding ?? DEFAULTS.padding;
  const labelSize = options.labelSize ?? DEFAULTS.labelSize;
  const tileWidth = Math.floor((sheetWidth - padding * (columns + 1)) / columns);
  return {
    columns,
    rowsPerSheet: options.rowsPerSheet ?? DEFAULTS.rowsPerSheet,
    sheetWidth,
    padding,
    labelSize,
    tileWidth,
    imageHeight: Math.round(tileWidth * 0.7),
    labelHeight: Math.round(labelSize * 1.6),
  };
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function textSvg(width: number, height: number, text: string, size: number, fill: string, background?: string): Buffer {
  const rect = background ? `<rect width="100%" height="100%" fill="${background}"/>` : "";
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${rect}` +
      `<text x="50%" y="50%" dominant-baseline="central" text-anchor="middle" font-family="DejaVu Sans, Arial, sans-serif" ` +
      `font-weight="bold" font-size="${size}" fill="${fill}">${escapeXml(text)}</text></svg>`,
  );
}

/** The asset scaled to fit the tile's image box (never enlarged), or a card saying why it can't be shown. */
async function tileImage(asset: ContactSheetAsset, layout: Layout): Promise<{ png: Buffer; width: number; height: number }> {
  const box = { width: layout.tileWidth, height: layout.imageHeight };
  if (!VIDEO_EXTENSIONS.has(path.extname(asset.file).toLowerCase())) {
    try {
      const meta = await sharp(asset.file, { animated: false }).metadata();
      // Fit the box, but blow small icons up at most 4x: big enough to recognise, not a blur.
      const scale = Math.min(box.width / (meta.width || box.width), box.height / (meta.height || box.height), MAX_UPSCALE);
      const width = Math.max(1, Math.round((meta.width || box.width) * scale));
      const height = Math.max(1, Math.round((meta.height || box.height) * scale));
      const { data, info } = await sharp(asset.file, { animated: false })
        .resize({ width: Math.min(width, box.width), height: Math.min(height, box.height), fit: "inside", kernel: scale > 1 ? "nearest" : "lanczos3" })
        .png()
        .toBuffer({ resolveWithObject: true });
      return { png: data, width: info.width, height: info.height };
    } catch (error) {
      logger.warn(`contact sheet: cannot decode ${asset.file} (${error instanceof Error ? error.message : String(error)}); drawing a placeholder`);
    }
  }
  const label = VIDEO_EXTENSIONS.has(path.extname(asset.file).toLowerCase()) ? "video" : "unreadable image";
  return {
    png: await sharp(textSvg(box.width, box.height, label, layout.labelSize, "#ffffff", "#555555"))
      .png()
      .toBuffer(),
    ...box,
  };
}

async function renderSheet(assets: readonly ContactSheetAsset[], layout: Layout): Promise<Buffer> {
  const rows = Math.ceil(assets.length / layout.columns);
  const tileHeight = layout.imageHeight + layout.labelHeight;
  const height = layout.padding + rows * (tileHeight + layout.padding);
  const composites: OverlayOptions[] = [];
  for (const [index, asset] of assets.entries()) {
    const left = layout.padding + (index % layout.columns) * (layout.tileWidth + layout.padding);
    const top = layout.padding + Math.floor(index / layout.columns) * (tileHeight + layout.padding);
    // A light grey box marks the tile, so transparent and white assets are still visible.
    composites.push({
      input: { create: { width: layout.tileWidth, height: layout.imageHeight, channels: 4, background: "#e6e6e6" } },
      left,
      top,
    });
    const image = await tileImage(asset, layout);
    composites.push({
      input: image.png,
      left: left + Math.floor((layout.tileWidth - image.width) / 2),
      top: top + Math.floor((layout.imageHeight - image.height) / 2),
    });
    composites.push({
      input: textSvg(layout.tileWidth, layout.labelHeight, asset.name, layout.labelSize, "#111111"),
      left,
      top: top + layout.imageHeight,
    });
  }
  return sharp({ create: { width: layout.sheetWidth, height, channels: 3, background: "#ffffff" } })
    .composite(composites)
    .png()
    .toBuffer();
}

/**
 * One PNG per `columns × rowsPerSheet` assets, in the given order. No assets → no sheets.
 */
export async function buildContactSheets(assets: readonly ContactSheetAsset[], options: ContactSheetOptions = {}): Promise<Buffer[]> {
  const layout = layoutFor(options);
  const perSheet = layout.columns * layout.rowsPerSheet;
  const sheets: Buffer[] = [];
  for (let start = 0; start < assets.length; start += perSheet) {
    sheets.push(await renderSheet(assets.slice(start, start + perSheet), layout));
  }
  return sheets;
}

/** Where tile `index` of a sheet sits (for tests and for anyone cropping a label back out). */
export function contactSheetTileBox(
  index: number,
  options: ContactSheetOptions = {},
): { left: number; top: number; width: number; imageHeight: number; labelHeight: number } {
  const layout = layoutFor(options);
  const tileHeight = layout.imageHeight + layout.labelHeight;
  const slot = index % (layout.columns * layout.rowsPerSheet);
  return {
    left: layout.padding + (slot % layout.columns) * (layout.tileWidth + layout.padding),
    top: layout.padding + Math.floor(slot / layout.columns) * (tileHeight + layout.padding),
    width: layout.tileWidth,
    imageHeight: layout.imageHeight,
    labelHeight: layout.labelHeight,
  };
}
