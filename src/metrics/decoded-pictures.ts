/**
 * A picture's pixels, decoded once while it is in use. One screenshot is measured by many
 * engines — its content key (image-readings.ts), the pixel difference, the scroll shift,
 * the judge's crops and colours, SSIM, the self-check's grey pixels — and each decoded the
 * PNG again: from empty caches the demo decoded its few hundred screens about 3,100 times
 * (counted with a temporary probe), at about 7 ms a 720p screen. Here a picture is decoded
 * once and kept in a memory bounded by bytes (least recently used go first).
 *
 * The content key and the judge's crops were already taken from a picture's decoded pixels,
 * whatever the picture. The other engines ran sharp pipelines on the file; `pictureSharp`
 * starts them from the decoded pixels only where that was checked to give the same bytes:
 * a colour PNG (RGB, RGBA, or a palette of 8-bit indices) of 8 bits a sample, without an
 * ICC profile. A 16-bit file decoded to 8 bits loses what a pipeline from the file computes
 * with; a JPEG may be shrunk as it is decoded; grey PNGs (which decode to three channels
 * where the file gives one) and pictures with an ICC profile came out the same in our
 * checks, but only by how libvips rounds and converts, so they are not relied on. Every
 * other picture goes through its engines' pipelines from its file, as before.
 */
import sharp, { type Sharp } from "sharp";
import { sha256Hex } from "../files/content-hash.ts";
import { oncePerBuffer } from "./once-per-buffer.ts";

export interface DecodedPixels {
  /** Row-major samples, 8 bits each, `channels` per pixel. */
  data: Buffer;
  info: { width: number; height: number; channels: 1 | 2 | 3 | 4 };
}

export const DECODED_PICTURES_SETTINGS = Object.freeze({
  /**
   * Decoded pixels kept at most: about 48 screens of 1280 × 720 in RGB, several times what
   * the pages being judged at once are measured on (each step's two screens, the true two).
   */
  memoryBytes: 128 * 1024 * 1024,
});

const bytesHashes = new WeakMap<Buffer, string>();

/**
 * The hash of a picture's bytes, computed once while its Buffer lives (a screen is asked for
 * many times by the same Buffer): this memory's key, and image-readings.ts's for a content key.
 */
export function pictureBytesHash(picture: Buffer): string {
  let hash = bytesHashes.get(picture);
  if (!hash) {
    hash = sha256Hex(picture);
    bytesHashes.set(picture, hash);
  }
  return hash;
}

interface Kept {
  pixels: Promise<DecodedPixels>;
  bytes: number;
}

/** Decoded pixels by the hash of the file's bytes, bounded by bytes, least recently used going first. */
export class DecodedPictureMemory {
  private readonly kept = new Map<string, Kept>();
  private keptBytes = 0;

  constructor(
    private readonly limitBytes: number = DECODED_PICTURES_SETTINGS.memoryBytes,
    private readonly decode: (picture: Buffer) => Promise<DecodedPixels> = decodeWithSharp,
  ) {}

  /** The picture's pixels as `sharp(picture).raw()` gives them, decoded once while kept. A picture that does not decode throws (and is not kept). */
  pixels(picture: Buffer): Promise<DecodedPixels> {
    const hash = pictureBytesHash(picture);
    const known = this.kept.get(hash);
    if (known) {
      // Most recently used goes last.
      this.kept.delete(hash);
      this.kept.set(hash, known);
      return known.pixels;
    }
    const entry: Kept = { pixels: this.decode(picture), bytes: 0 };
    this.keep(hash, entry);
    entry.pixels.then(
      (pixels) => {
        if (this.kept.get(hash) !== entry) return;
        entry.bytes = pixels.data.length;
        this.keptBytes += entry.bytes;
        this.evictBeyondLimit(hash);
      },
      () => {
        if (this.kept.get(hash) === entry) this.kept.delete(hash);
      },
    );
    return entry.pixels;
  }

  /** Bytes of decoded pixels held now. */
  get bytesHeld(): number {
    return this.keptBytes;
  }

  clear(): void {
    this.kept.clear();
    this.keptBytes = 0;
  }

  private keep(hash: string, entry: Kept): void {
    this.kept.set(hash, entry);
    this.keptBytes += entry.bytes;
    this.evictBeyondLimit(hash);
  }

  /**
   * The least recently used go until the kept bytes are within the limit. `newest` stays, and
   * so do pictures still being decoded (they hold nothing yet; dropped, they would be decoded twice).
   */
  private evictBeyondLimit(newest: string): void {
    for (const [hash, old] of this.kept) {
      if (this.keptBytes <= this.limitBytes) break;
      if (hash === newest || old.bytes === 0) continue;
      this.kept.delete(hash);
      this.keptBytes -= old.bytes;
    }
  }
}

async function decodeWithSharp(picture: Buffer): Promise<DecodedPixels> {
  const { data, info } = await sharp(picture).raw().toBuffer({ resolveWithObject: true });
  return { data, info: { width: info.width, height: info.height, channels: info.channels } };
}

/** This process's memory of decoded pictures. */
const memory = new DecodedPictureMemory();

/** The picture's pixels as `sharp(picture).raw()` gives them, decoded once while this process keeps them. */
export function decodedPixels(picture: Buffer): Promise<DecodedPixels> {
  return memory.pixels(picture);
}

/**
 * Whether a pipeline gives the same bytes from the picture's decoded pixels as from its file
 * (see the header), by sharp's reading of its header: a PNG in sRGB (colour or palette, not
 * grey) of 8 bits a sample without an ICC profile. Asked once while the Buffer lives; a
 * header sharp cannot read answers no (the file's pipeline will say what is wrong).
 */
export const decodesLosslessly: (picture: Buffer) => Promise<boolean> = oncePerBuffer(async (picture) => {
  try {
    const { format, space, bitsPerSample, hasProfile } = await sharp(picture).metadata();
    return format === "png" && space === "srgb" && bitsPerSample === 8 && !hasProfile;
  } catch {
    return false;
  }
});

/**
 * A sharp pipeline over the picture that gives what `sharp(picture)` would: from its
 * decoded pixels where that gives the same bytes (see the header), else from the file.
 */
export async function pictureSharp(picture: Buffer): Promise<Sharp> {
  if (!(await decodesLosslessly(picture))) return sharp(picture);
  const { data, info } = await decodedPixels(picture);
  return sharp(data, { raw: info });
}

/** Bytes of decoded pixels this process keeps now. */
export function decodedPicturesHeld(): number {
  return memory.bytesHeld;
}

/** Forgets every picture this process kept (a benchmark's fresh start, tests). */
export function forgetDecodedPictures(): void {
  memory.clear();
}
