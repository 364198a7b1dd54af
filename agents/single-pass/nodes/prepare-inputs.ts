/**
 * prepare-inputs: the images and the prompt for one request. Sheets are read (and
 * shrunk when the model wants a bounded side), the frame budget is what the model's
 * caps leave beside the sheets, and the video is sampled for exactly that many frames
 * so none are decoded only to be thrown away.
 */
import fs from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { IwrError } from "../../../src/errors.ts";
import { sampleFrames } from "../../../src/media/frames.ts";
import { defaultRequestImagesDir, storeByContent } from "../../../src/media/image-store.ts";
import { frameBudget, resizeToMaxSide, selectImages } from "../../../src/media/images.ts";
import type { ModelSpec } from "../../../src/models/index.ts";
import { loadPrompt, loadPromptFile, renderPrompt } from "../../../src/prompts/template.ts";
import { type ProtocolProfile, profileRules } from "../../../src/protocol.ts";
import { ASSET_PLACEHOLDER } from "../../../src/tasks/schema.ts";
import { assetsBasePath } from "../html-reply.ts";
import { contextOf, type PreparedImage, type SinglePassConfig, type SinglePassUpdate, type SinglePassValues } from "../state.ts";

/** prompts/generate.md: the benchmark's generation instructions. */
const PROMPT_NAME = "generate";

async function readSheet(file: string, maxSide: number | undefined): Promise<Buffer> {
  let png: Buffer;
  try {
    png = await fs.readFile(file);
  } catch (error) {
    throw new IwrError("MEDIA", `cannot read asset sheet ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { file });
  }
  return maxSide === undefined ? png : resizeToMaxSide(png, maxSide);
}

/**
 * The images of a request for these inputs: the sheets (shrunk when the model wants a
 * bounded side) and as many frames as the model's caps leave beside them. Shared with
 * the agent, whose drafts carry the same images as a single-pass request.
 */
export async function requestImages(
  inputs: Pick<SinglePassValues["inputs"], "assetSheetPaths" | "videoPath">,
  spec: ModelSpec,
  protocol: ProtocolProfile = "corrected",
) {
  const rules = profileRules(protocol);
  const limits = { maxImages: spec.maxImages, maxFrames: spec.maxFrames, overCap: rules.sheetsOverCap };
  // Checked before any decoding: under corrected, a task whose sheets alone break the cap fails at once.
  const budget = frameBudget(inputs.assetSheetPaths.length, limits, limits.overCap);
  const sheets = await Promise.all(inputs.assetSheetPaths.map((file) => readSheet(file, spec.maxImageSide)));
  const sampled =
    budget === 0
      ? []
      : await sampleFrames(inputs.videoPath, { maxFrames: budget, count: rules.frameCount, ...(spec.maxImageSide ? { maxSide: spec.maxImageSide } : {}) });
  return selectImages({ sheets, frames: sampled, ...limits });
}

/** JPEG quality of frames sent as JPEG: OpenCV's imwrite default, which the harness uses. */
const HARNESS_JPEG_QUALITY = 95;

async function frameFile(png: Buffer, format: "jpeg" | "png"): Promise<{ data: Buffer; extension: string }> {
  if (format === "png") return { data: png, extension: "png" };
  return { data: await sharp(png).jpeg({ quality: HARNESS_JPEG_QUALITY }).toBuffer(), extension: "jpg" };
}

export async function prepareInputs(state: Pick<SinglePassValues, "inputs">, config: SinglePassConfig): Promise<SinglePassUpdate> {
  const context = contextOf(config);
  const { inputs } = state;
  const protocol = context.protocol ?? "corrected";
  const selection = await requestImages(inputs, context.model.spec, protocol);
  const imagesDir = defaultRequestImagesDir();
  const frameFormat = profileRules(protocol).frameFormat;
  const frames = await Promise.all(selection.frames.map(async (frame) => ({ frame, file: await frameFile(frame.png, frameFormat) })));

  const images: PreparedImage[] = [
    ...selection.sheets.map((png, i) => ({
      kind: "sheet" as const,
      ...storeByContent(imagesDir, png, "png"),
      label: path.basename(inputs.assetSheetPaths[i] ?? `sheet-${i}`),
    })),
    ...frames.map(({ frame, file }) => ({
      kind: "frame" as const,
      ...storeByContent(imagesDir, file.data, file.extension),
      label: `t=${frame.timeSec.toFixed(2)}s`,
    })),
  ];
  const prompt = context.promptFile ? loadPromptFile(context.promptFile) : loadPrompt(PROMPT_NAME);
  const rendered = renderPrompt(prompt, {
    width: inputs.resolution.width,
    height: inputs.resolution.height,
    sheet_count: selection.sheets.length,
    frame_count: selection.frames.length,
    assets_placeholder: ASSET_PLACEHOLDER,
  });
  return {
    prompt: { name: prompt.name, text: rendered.text, hash: rendered.hash },
    images,
    imageCounts: { sheets: selection.sheets.length, frames: selection.frames.length, framesDropped: selection.framesDropped },
    assetsBase: assetsBasePath(context.outputDir, inputs.assetsDir),
  };
}
