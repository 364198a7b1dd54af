/**
 * What each asset's contact-sheet tile is drawn from. Most assets are drawn as they
 * are; an image the sheet's decoder (sharp) cannot read — an `.ico`, an SVG it rejects
 * — is drawn by Chromium instead, which showed it on the page, and converted to PNG for
 * the tile (the asset file itself stays as the page uses it). An image neither can
 * decode is reported, never drawn as a silent placeholder.
 */
import fs from "node:fs";
import path from "node:path";
import type { BrowserContext } from "playwright";
import sharp from "sharp";
import { evaluateInPage } from "../browser/page-scripts.ts";
import { contentType } from "../browser/static-files.ts";
import type { ContactSheetAsset } from "../media/contact-sheet.ts";
import type { RecordedAsset } from "./assets.ts";

const VIDEO_EXTENSION = /\.(mp4|webm|ogv|mov|m4v)$/i;
/** The side an image without an intrinsic size (some SVGs) is drawn at. */
const SIZELESS_SIDE = 256;

export interface SheetSources {
  readonly assets: ContactSheetAsset[];
  /** Assets converted for their tile, e.g. "004.ico (drawn by Chromium as PNG)". */
  readonly converted: string[];
  /** Assets no decoder could read; their tiles say "unreadable image". */
  readonly unreadable: string[];
}

async function sharpReads(file: string): Promise<boolean> {
  try {
    const meta = await sharp(file, { animated: false }).metadata();
    return Boolean(meta.width && meta.height);
  } catch {
    return false;
  }
}

/** Runs in the page: the data URL drawn on a canvas, as PNG, or null when the browser cannot decode it. */
async function drawAsPng(arg: { dataUrl: string; side: number }): Promise<string | null> {
  const image = new Image();
  image.src = arg.dataUrl;
  try {
    await image.decode();
  } catch {
    return null;
  }
  const canvas = document.createElement("canvas");
  canvas.width = image.naturalWidth || arg.side;
  canvas.height = image.naturalHeight || arg.side;
  const context = canvas.getContext("2d");
  if (!context) return null;
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  return canvas.toDataURL("image/png");
}

export async function sheetSourcesFor(assets: readonly RecordedAsset[], context: BrowserContext, workDir: string): Promise<SheetSources> {
  const sources: ContactSheetAsset[] = [];
  const converted: string[] = [];
  const unreadable: string[] = [];
  let page: Awaited<ReturnType<BrowserContext["newPage"]>> | undefined;
  try {
    for (const asset of assets) {
      if (VIDEO_EXTENSION.test(asset.name) || (await sharpReads(asset.file))) {
        sources.push({ name: asset.name, file: asset.file });
        continue;
      }
      page ??= await context.newPage();
      // The type the site's files are served with here, so Chromium decodes the bytes as the page did.
      const mime = contentType(asset.name).split(";")[0]!;
      const dataUrl = `data:${mime};base64,${fs.readFileSync(asset.file).toString("base64")}`;
      const png = await evaluateInPage(page, drawAsPng, { dataUrl, side: SIZELESS_SIDE }).catch(() => null);
      if (!png) {
        unreadable.push(asset.name);
        sources.push({ name: asset.name, file: asset.file });
        continue;
      }
      const tileFile = path.join(workDir, ".sheet-tiles", `${asset.name}.png`);
      fs.mkdirSync(path.dirname(tileFile), { recursive: true });
      fs.writeFileSync(tileFile, Buffer.from(png.slice(png.indexOf(",") + 1), "base64"));
      sources.push({ name: asset.name, file: tileFile });
      converted.push(`${asset.name} (drawn by Chromium as PNG for its tile)`);
    }
  } finally {
    await page?.close().catch(() => undefined);
  }
  return { assets: sources, converted, unreadable };
}
