/**
 * How a crop of a screen is prepared for Tesseract, which reads dark text on a light,
 * even background best: grey levels stretched, light-on-dark areas turned dark-on-light,
 * rules across the crop erased, stretched again, enlarged, on a white margin. Pixel work
 * on a grey buffer (and the finished crop's content key, taken from its pixels); which
 * crops are cut and read is ocr-reading.ts's business.
 */
import sharp from "sharp";
import { rememberImagePixels } from "../../metrics/image-readings.ts";

export const CROP_PREPARATION_SETTINGS = Object.freeze({
  /** The largest side an enlarged crop may reach. */
  maxSide: 2400,
  /** White margin around a prepared crop (Tesseract misreads text that touches the edge). */
  margin: 24,
  /** A pixel below this grey level (once stretched) is dark. */
  dark: 128,
  /**
   * A dark area to invert (a banner, a button, a badge, a dark page): a connected dark
   * patch at least this wide and tall (screen pixels) whose pixels fill at least `density`
   * of its box. A letter is thinner than that or fills less of its box, even a bold one.
   */
  darkArea: Object.freeze({ minWidth: 24, minHeight: 12, density: 0.6 }),
  /**
   * Rules to erase (eraseRules): a horizontal one is an unbroken dark run of at least
   * `minRule` pixels across `across` of the crop; a vertical one a box's side, a run down
   * that joins two horizontal rules from `minSide` on, or one of at least `minRule` that
   * comes within `corner` pixels of one at an end.
   */
  rules: Object.freeze({ across: 0.4, minRule: 20, minSide: 8, corner: 2 }),
});

/**
 * How a crop is prepared, as part of its readings' key: every setting above, the libvips
 * that resizes it, and a version to bump whenever the code gives other pixels, or readings
 * of the old crops would be taken for the new.
 */
export const CROP_PREPARATION =
  "grey, stretched darkest to lightest, dark areas inverted, rules erased, stretched, lanczos3: v4, " +
  `${JSON.stringify(CROP_PREPARATION_SETTINGS)}, libvips ${sharp.versions.vips}`;

/**
 * Grey levels stretched in place from the crop's darkest to its lightest, linearly. Not
 * sharp's normalise(), which stretches in Lab between percentiles without clamping: on a
 * band of an off-white page holding two buttons the background fell just past the upper
 * percentile and wrapped round to near black, and the band was read inverted. Nor any
 * percentile clipping: where text is under 1 % of a crop (a light badge and its few dark
 * letters on a white band) the clipped end lands on the badge, and it goes black, text and all.
 */
export function stretchContrast(grey: Buffer): void {
  let [low, high] = [255, 0];
  for (const value of grey) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  if (high - low < 2 || (low === 0 && high === 255)) return;
  const factor = 255 / (high - low);
  for (let index = 0; index < grey.length; index++) grey[index] = Math.round((grey[index]! - low) * factor);
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
  // Each pixel is pushed at most once (marked as it is pushed), so one array of the crop's size holds the stack.
  const stack = new Int32Array(width * height);
  const boxes: Array<{ left: number; top: number; right: number; bottom: number }> = [];
  const visit = (next: number, depth: number): number => {
    if (seen[next] || grey[next]! >= dark) return depth;
    seen[next] = 1;
    stack[depth] = next;
    return depth + 1;
  };
  for (let start = 0; start < width * height; start++) {
    if (seen[start] || grey[start]! >= dark) continue;
    let depth = visit(start, 0);
    let [left, right, top, bottom, pixels] = [width, -1, height, -1, 0];
    while (depth > 0) {
      const index = stack[--depth]!;
      const y = Math.floor(index / width);
      const x = index - y * width;
      pixels += 1;
      if (x < left) left = x;
      if (x > right) right = x;
      if (y < top) top = y;
      if (y > bottom) bottom = y;
      if (x > 0) depth = visit(index - 1, depth);
      if (x < width - 1) depth = visit(index + 1, depth);
      if (y > 0) depth = visit(index - width, depth);
      if (y < height - 1) depth = visit(index + width, depth);
    }
    const [boxWidth, boxHeight] = [right - left + 1, bottom - top + 1];
    if (boxWidth >= darkArea.minWidth && boxHeight >= darkArea.minHeight && pixels >= darkArea.density * boxWidth * boxHeight) {
      boxes.push({ left, top, right, bottom });
    }
  }
  // Inverted once each, after all are found: a box inside another (a dark button on a light card of a dark page) is not turned back.
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
 * background (CROP_PREPARATION_SETTINGS.rules): Tesseract reads the text beside a box edge
 * as part of a letter, or not at all, where a person sees a value in a field. So the stem
 * of a tall "1" is never taken for one.
 */
function eraseRules(grey: Buffer, width: number, height: number): void {
  const { dark: darkBelow, rules } = CROP_PREPARATION_SETTINGS;
  const dark = (x: number, y: number) => grey[y * width + x]! < darkBelow;
  const horizontal: Array<{ y: number; from: number; to: number }> = [];
  for (let y = 0; y < height; y++) {
    let start = -1;
    for (let x = 0; x <= width; x++) {
      const isDark = x < width && dark(x, y);
      if (isDark && start < 0) start = x;
      if (!isDark && start >= 0) {
        if (x - start >= Math.max(rules.minRule, rules.across * width)) horizontal.push({ y, from: start, to: x - 1 });
        start = -1;
      }
    }
  }
  const meetsRule = (x: number, y: number) =>
    horizontal.some((rule) => Math.abs(rule.y - y) <= rules.corner && x >= rule.from - rules.corner && x <= rule.to + rules.corner);
  const vertical: Array<{ x: number; from: number; to: number }> = [];
  for (let x = 0; x < width; x++) {
    let start = -1;
    for (let y = 0; y <= height; y++) {
      const isDark = y < height && dark(x, y);
      if (isDark && start < 0) start = y;
      if (!isDark && start >= 0) {
        const [top, bottom] = [meetsRule(x, start), meetsRule(x, y - 1)];
        // A box's side joins its top and bottom (any height); a longer run needs one of them.
        if ((top && bottom && y - start >= rules.minSide) || (y - start >= rules.minRule && (top || bottom))) vertical.push({ x, from: start, to: y - 1 });
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
 * maxSide), as a PNG for OCR (sharp writes it with three equal channels). Stretched again
 * after the rules go: faint text inside a dark-bordered field becomes the darkest thing
 * left. The PNG is written from pixels in hand, and its content key is taken from them:
 * keying the crop's reading needs no decoding.
 */
export async function prepareCrop(grey: Buffer, size: { width: number; height: number }, scale: number): Promise<Buffer> {
  const { maxSide, margin } = CROP_PREPARATION_SETTINGS;
  if (grey.length !== size.width * size.height) throw new Error(`prepareCrop: ${grey.length} bytes for a ${size.width}x${size.height} grey crop (one channel)`);
  stretchContrast(grey);
  invertDarkAreas(grey, size.width, size.height);
  eraseRules(grey, size.width, size.height);
  stretchContrast(grey);
  const factor = Math.max(1, Math.min(scale, maxSide / Math.max(size.width, size.height)));
  const { data, info } = await sharp(grey, { raw: { width: size.width, height: size.height, channels: 1 } })
    .resize(Math.round(size.width * factor), Math.round(size.height * factor), { kernel: "lanczos3" })
    .extend({ top: margin, bottom: margin, left: margin, right: margin, background: "#ffffff" })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const pixels = { data, info: { width: info.width, height: info.height, channels: info.channels } };
  // Fast compression: the crop lives only to be read (its pixels, not its bytes, key the reading).
  const png = await sharp(data, { raw: pixels.info }).png({ compressionLevel: 1 }).toBuffer();
  rememberImagePixels(png, pixels);
  return png;
}
