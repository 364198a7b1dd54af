/**
 * DINOv2's image preprocessing (BitImageProcessor as configured by facebook/dinov2-base's
 * preprocessor_config.json), written with sharp so it matches what Python's harness
 * feeds the model:
 *   RGB → resize so the shorter side is 256 (longer side int(256·long/short)), bicubic
 *   → center crop 224×224 (offsets int((size − crop)/2)) → ×1/255 → (x − mean)/std → CHW.
 *
 * Why not transformers.js's own processor: in Node it resizes with an affine bicubic
 * transform that does not low-pass when shrinking, while PIL's (and sharp's) resize
 * does — screenshots shrink ~3×, so the two would see visibly different pixels.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { z } from "zod";
import { IwrError } from "../errors.ts";
import { METRIC_SETTINGS } from "./settings.ts";

export interface DinoPreprocessing {
  shortestEdge: number;
  cropHeight: number;
  cropWidth: number;
  rescaleFactor: number;
  imageMean: readonly [number, number, number];
  imageStd: readonly [number, number, number];
}

const Triple = z.tuple([z.number(), z.number(), z.number()]);

/** The keys of preprocessor_config.json we honour; anything else in the file is ignored. */
const PreprocessorConfigSchema = z.looseObject({
  do_resize: z.boolean().optional(),
  do_center_crop: z.boolean().optional(),
  do_rescale: z.boolean().optional(),
  do_normalize: z.boolean().optional(),
  size: z.looseObject({ shortest_edge: z.number().int().positive() }).optional(),
  crop_size: z.looseObject({ height: z.number().int().positive(), width: z.number().int().positive() }).optional(),
  resample: z.number().int().optional(),
  rescale_factor: z.number().positive().optional(),
  image_mean: Triple.optional(),
  image_std: Triple.optional(),
});

function defaults(): DinoPreprocessing {
  const d = METRIC_SETTINGS.dino.preprocessorDefaults;
  return {
    shortestEdge: d.shortestEdge,
    cropHeight: d.cropHeight,
    cropWidth: d.cropWidth,
    rescaleFactor: d.rescaleFactor,
    imageMean: [d.imageMean[0] ?? 0, d.imageMean[1] ?? 0, d.imageMean[2] ?? 0],
    imageStd: [d.imageStd[0] ?? 1, d.imageStd[1] ?? 1, d.imageStd[2] ?? 1],
  };
}

/**
 * Reads `<modelDir>/preprocessor_config.json` (dinov2-base's values for missing keys).
 * A config that asks for a pipeline we do not implement (no resize, no crop, a
 * resampling other than bicubic) is refused rather than silently approximated.
 */
export function readDinoPreprocessing(modelDir: string): DinoPreprocessing {
  const file = path.join(modelDir, "preprocessor_config.json");
  const base = defaults();
  if (!fs.existsSync(file)) return base;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = PreprocessorConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IwrError("CONFIG_INVALID", `${file}: ${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`);
  }
  const config = parsed.data;
  const unsupported = [
    config.do_resize === false && "do_resize=false",
    config.do_center_crop === false && "do_center_crop=false",
    config.do_rescale === false && "do_rescale=false",
    config.do_normalize === false && "do_normalize=false",
    config.resample !== undefined && config.resample !== METRIC_SETTINGS.dino.preprocessorDefaults.resample && `resample=${config.resample}`,
  ].filter((entry): entry is string => typeof entry === "string");
  if (unsupported.length > 0) {
    throw new IwrError(
      "CONFIG_INVALID",
      `${file}: unsupported preprocessing ${unsupported.join(", ")}; expected dinov2's (resize, bicubic, center crop, rescale, normalize)`,
    );
  }
  return {
    shortestEdge: config.size?.shortest_edge ?? base.shortestEdge,
    cropHeight: config.crop_size?.height ?? base.cropHeight,
    cropWidth: config.crop_size?.width ?? base.cropWidth,
    rescaleFactor: config.rescale_factor ?? base.rescaleFactor,
    imageMean: config.image_mean ?? base.imageMean,
    imageStd: config.image_std ?? base.imageStd,
  };
}

/** Output size of "resize shorter side to `shortestEdge`", as transformers (Python) computes it. */
export function resizedSize(width: number, height: number, shortestEdge: number): { width: number; height: number } {
  if (width <= height) return { width: shortestEdge, height: Math.trunc((shortestEdge * height) / width) };
  return { width: Math.trunc((shortestEdge * width) / height), height: shortestEdge };
}

/** A PNG (or any image sharp reads) → `pixel_values` data, CHW float32 of length 3·cropHeight·cropWidth. */
export async function preprocessForDino(image: Buffer, prep: DinoPreprocessing): Promise<Float32Array> {
  const source = sharp(image).removeAlpha().toColourspace("srgb");
  const meta = await sharp(image).metadata();
  if (!meta.width || !meta.height) throw new IwrError("MEDIA", "DINO preprocessing: the image has no readable size");
  const resized = resizedSize(meta.width, meta.height, prep.shortestEdge);
  if (resized.width < prep.cropWidth || resized.height < prep.cropHeight) {
    throw new IwrError(
      "MEDIA",
      `DINO preprocessing: resized image ${resized.width}x${resized.height} is smaller than the ${prep.cropWidth}x${prep.cropHeight} crop`,
    );
  }
  const left = Math.trunc((resized.width - prep.cropWidth) / 2);
  const top = Math.trunc((resized.height - prep.cropHeight) / 2);
  const { data } = await source
    .resize({ width: resized.width, height: resized.height, fit: "fill", kernel: "cubic" })
    .extract({ left, top, width: prep.cropWidth, height: prep.cropHeight })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const plane = prep.cropWidth * prep.cropHeight;
  const pixels = new Float32Array(3 * plane);
  for (let channel = 0; channel < 3; channel += 1) {
    const mean = prep.imageMean[channel] ?? 0;
    const std = prep.imageStd[channel] ?? 1;
    for (let i = 0; i < plane; i += 1) {
      pixels[channel * plane + i] = ((data[i * 3 + channel] ?? 0) * prep.rescaleFactor - mean) / std;
    }
  }
  return pixels;
}
