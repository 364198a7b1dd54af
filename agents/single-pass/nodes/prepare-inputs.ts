import path from "node:path";
import sharp from "sharp";
import { assetsBasePath } from "../../../src/generation/page-from-reply.ts";
import { requestImages } from "../../../src/generation/request-images.ts";
import { defaultRequestImagesDir, storeByContent } from "../../../src/media/image-store.ts";
import { loadPrompt, loadPromptFile, renderPrompt } from "../../../src/prompts/template.ts";
import { profileRules } from "../../../src/protocol.ts";
import { ASSET_PLACEHOLDER } from "../../../src/tasks/inputs.ts";
import { contextOf, type PreparedImage, type SinglePassConfig, type SinglePassUpdate, type SinglePassValues } from "../state.ts";

/** prompts/generate.md: the benchmark's generation instructions. */
const PROMPT_NAME = "generate";

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
