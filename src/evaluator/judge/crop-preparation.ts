/**
 * How a crop of a screen is prepared for Tesseract, which reads dark text on a light,
 * even background best: grey levels stretched, light-on-dark areas turned dark-on-light,
 * rules across the crop erased, stretched again, enlarged, on a white margin. Pure pixel
 * work on a grey buffer; which crops are cut and read is ocr-reading.ts's business.
 */
import sharp from "sharp";

export const CROP_PREPARATION_SETTINGS = Object.freeze({
  /** The largest side an enlarged crop may reach. */
  maxSide: 2400,
  /** White margin around a prepared crop (Tesseract misreads text that touches the edge). */
  margin: 24,
  /** Share of the pixels at each end of the grey scale that the stretch sends to black and white. */
  stretchClip: 0.01,
  /** A pixel below this grey level (once stretched) is dark. */
  dark: 128,
  /**
   * A dark area to invert (a banner, a button, a badge, a dark page): a connected dark
   * patch at least this wide and tall (screen pixels) whose pixels fill at least `density`
   * of its box. A letter is thinner than that or leaves most of its box light, even bold.
   */
  darkArea: Object.freeze({ minWidth: 24, minHeight: 12, density: 0.6 }),
});

/**
 * How a crop is prepared, as part of its readings' key, with the libvips that resizes it:
 * bump the version whenever the preparation gives other pixels, or readings of the old
 * crops would be taken for the new.
 */
export const CROP_PREPARATION = (() => {
  const { maxSide, margin, stretchClip, dark, darkArea } = CROP_PREPARATION_SETTINGS;
  return (
    `grey, stretched (${stretchClip} clipped or the full range, clamped), dark areas (< ${dark}, ≥ ${darkArea.minWidth}x${darkArea.minHeight}, ` +
    `density ≥ ${darkArea.density}) inverted, rules erased, stretched, lanczos3, margin ${margin}, max side ${maxSide}: v3, libvips ${sharp.versions.vips}`
  );
})();

/**
 * Grey levels stretched in place so that the darkest and the lightest `stretchClip` of the
 * pixels go black and white, everything between scaled and clamped (the whole range, when
 * those ends meet). Written here rather
 * than sharp's normalise(), which stretches in Lab without clamping: on a crop that is
 * almost all one light background (a band of a #fafafa page with two buttons in it) the
 * background fell just past the upper bound and wrapped round to near black, and the whole
 * band was then read inverted.
 */
export function stretchContrast(grey: Buffer): void {
  const counts = new Array<number>(256).fill(0);
  for (const value of grey) counts[value]! += 1;
  const clipped = grey.length * CROP_PREPARATION_SETTINGS.stretchClip;
  let low = 0;
  for (let seen = counts[0]!; seen <= clipped && low < 255; seen += counts[++low]!);
  let high = 255;
  for (let seen = counts[255]!; seen <= clipped && high > 0; seen += counts[--high]!);
  if (high - low < 2) {
    // A crop almost all one grey (a few dark pixels on an even background): its whole range is stretched instead.
    [low, high] = [counts.findIndex((count) => count > 0), counts.findLastIndex((count) => count > 0)];
    if (high - low < 2) return;
  }
  const factor = 255 / (high - low);
  for (let index = 0; index < grey.length; index++) grey[index] = Math.max(0, Math.min(255, Math.round((grey[index]! - low) * factor)));
}

/**
 * Every dark area of the crop (see CROP_PREPARATION_SETTINGS.darkArea) inverted over its
 * box, so the light text inside it reads as dark text on light: a whole dark crop, and
 * equally a dark banner or button on a light page, which a rule for the crop as a whole
 * leaves light-on-dark. Dark patches are found by 4-connected flood fill.
 */
export function invertDarkAreas(grey: Buffer, width: number, height: number): void {
  const { dark, darkArea } = CROP_PREPARATION_SETTINGS;
  const seen = new Uint8Array(width * height);
  const stack: number[] = [];
  const boxes: Array<{ left: number; top: number; right: number; bottom: number }> = [];
  for (let start = 0; start < grey.length; start++) {
    if (seen[start] || grey[start]! >= dark) continue;
    seen[start] = 1;
    stack.push(start);
    let [left, right, top, bottom, pixels] = [width, -1, height, -1, 0];
    while (stack.length > 0) {
      const index = stack.pop()!;
      const [x, y] = [index % width, Math.floor(index / width)];
      pixels += 1;
      [left, right, top, bottom] = [Math.min(left, x), Math.max(right, x), Math.min(top, y), Math.max(bottom, y)];
      for (const next of [x > 0 ? index - 1 : -1, x < width - 1 ? index + 1 : -1, y > 0 ? index - width : -1, y < height - 1 ? index + width : -1]) {
        if (next >= 0 && !seen[next] && grey[next]! < dark) {
          seen[next] = 1;
          stack.push(next);
        }
      }
    }
    const [boxWidth, boxHeight] = [right - left + 1, bottom - top + 1];
    if (boxWidth >= darkArea.minWidth && boxHeight >= darkArea.minHeight && pixels >= darkArea.density * boxWidth * boxHeight) {
      boxes.push({ left, top, right, bottom });
    }
  }
  // Inverted once each, after all are found: a box inside another (a dark badge on a dark banner) is not turned back.
  const inverted = new Uint8Array(width * height);
  for (const box of boxes) {
    for (let y = box.top; y <= box.bottom; y++) {
      for (let x = box.left; x <= box.right; x++) {
        const index = y * width + x;
        if (inverted[index]) continue;
        inverted[index] = 1;
        grey[index] = 255 - grey[index]!;
      }
    }
  }
}

/**
 * Rules drawn across a crop — a field's border, a table line, an underline — erased to the
 * background: Tesseract reads the text beside a box edge as part of a letter, or not at
 * all, where a person sees a value in a field. A horizontal rule is an unbroken dark run of
 * at least MIN_RULE pixels across RULE_ACROSS of the crop; a vertical one is a box's side:
 * a run down that joins two horizontal rules, or a run of at least MIN_RULE pixels that meets
 * one at an end. So the stem of a tall "1" is never taken for one.
 */
const RULE_ACROSS = 0.4;
const MIN_RULE = 20;
/** A vertical run joining two horizontal rules is a box's side from this length on. */
const MIN_SIDE = 8;
/** How near (pixels) a vertical run's end must come to a horizontal rule to be a box's side. */
const CORNER = 2;

function eraseRules(grey: Buffer, width: number, height: number): void {
  const dark = (x: number, y: number) => grey[y * width + x]! < 128;
  const horizontal: Array<{ y: number; from: number; to: number }> = [];
  for (let y = 0; y < height; y++) {
    let start = -1;
    for (let x = 0; x <= width; x++) {
      const isDark = x < width && dark(x, y);
      if (isDark && start < 0) start = x;
      if (!isDark && start >= 0) {
        if (x - start >= Math.max(MIN_RULE, RULE_ACROSS * width)) horizontal.push({ y, from: start, to: x - 1 });
        start = -1;
      }
    }
  }
  const meetsRule = (x: number, y: number) => horizontal.some((rule) => Math.abs(rule.y - y) <= CORNER && x >= rule.from - CORNER && x <= rule.to + CORNER);
  const vertical: Array<{ x: number; from: number; to: number }> = [];
  for (let x = 0; x < width; x++) {
    let start = -1;
    for (let y = 0; y <= height; y++) {
      const isDark = y < height && dark(x, y);
      if (isDark && start < 0) start = y;
      if (!isDark && start >= 0) {
        const [top, bottom] = [meetsRule(x, start), meetsRule(x, y - 1)];
        // A box's side joins its top and bottom (any height); a longer run needs one of them.
        if ((top && bottom && y - start >= MIN_SIDE) || (y - start >= MIN_RULE && (top || bottom))) vertical.push({ x, from: start, to: y - 1 });
        start = -1;
      }
    }
  }
  // A rule's antialiased fringe (the pixel beside it, lighter than "dark") goes with it: left behind it reads as a letter.
  const clear = (x: number, y: number) => {
    if (x >= 0 && x < width && y >= 0 && y < height) grey[y * width + x] = 255;
  };
  for (const rule of horizontal) for (let x = rule.from - 1; x <= rule.to + 1; x++) for (const dy of [-1, 0, 1]) clear(x, rule.y + dy);
  for (const rule of vertical) for (let y = rule.from - 1; y <= rule.to + 1; y++) for (const dx of [-1, 0, 1]) clear(rule.x + dx, y);
}

/**
 * A grey crop (screen pixels, one channel) prepared and enlarged `scale` times (at most to
 * maxSide), as a PNG for OCR. Stretched again after the rules go: faint text inside a
 * dark-bordered field becomes the darkest thing left.
 */
export function prepareCrop(grey: Buffer, size: { width: number; height: number }, scale: number): Promise<Buffer> {
  const { maxSide, margin } = CROP_PREPARATION_SETTINGS;
  stretchContrast(grey);
  invertDarkAreas(grey, size.width, size.height);
  eraseRules(grey, size.width, size.height);
  stretchContrast(grey);
  const factor = Math.max(1, Math.min(scale, maxSide / Math.max(size.width, size.height)));
  return (
    sharp(grey, { raw: { width: size.width, height: size.height, channels: 1 } })
      .resize(Math.round(size.width * factor), Math.round(size.height * factor), { kernel: "lanczos3" })
      .extend({ top: margin, bottom: margin, left: margin, right: margin, background: "#ffffff" })
      // Fast compression: the crop lives only to be read (its pixels, not its bytes, key the reading).
      .png({ compressionLevel: 1 })
      .toBuffer()
  );
}
