/**
 * Screenshot-like PNGs for the evaluator's metric tests, rendered by sharp from SVG
 * (real text rasterised by librsvg, so OCR has real glyphs to read).
 */
import sharp from "sharp";

export interface TextLine {
  text: string;
  x: number;
  y: number;
  size?: number;
  color?: string;
}

export interface PageSpec {
  width?: number;
  height?: number;
  background?: string;
  /** Filled rectangles drawn before the text, e.g. a dark footer band. */
  boxes?: { x: number; y: number; width: number; height: number; color: string }[];
  lines?: TextLine[];
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export async function renderPage(spec: PageSpec): Promise<Buffer> {
  const width = spec.width ?? 1280;
  const height = spec.height ?? 720;
  const boxes = (spec.boxes ?? []).map((box) => `<rect x="${box.x}" y="${box.y}" width="${box.width}" height="${box.height}" fill="${box.color}"/>`);
  const lines = (spec.lines ?? []).map(
    (line) =>
      `<text x="${line.x}" y="${line.y}" font-family="DejaVu Sans, sans-serif" ` +
      `font-size="${line.size ?? 32}" fill="${line.color ?? "#111111"}">${escapeXml(line.text)}</text>`,
  );
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<rect width="100%" height="100%" fill="${spec.background ?? "#ffffff"}"/>${boxes.join("")}${lines.join("")}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A 1280×720 page: dark text on white, and a dark footer band with light text. */
export function shoppingPage(headline = "Shopping List", item = "Buy milk and bread tomorrow"): Promise<Buffer> {
  return renderPage({
    boxes: [{ x: 0, y: 600, width: 1280, height: 120, color: "#222222" }],
    lines: [
      { text: headline, x: 60, y: 120, size: 48 },
      { text: item, x: 60, y: 300, size: 30, color: "#333333" },
      { text: "Footer text on dark", x: 60, y: 670, size: 30, color: "#eeeeee" },
    ],
  });
}

/** A solid-colour PNG. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } })
    .png()
    .toBuffer();
}
