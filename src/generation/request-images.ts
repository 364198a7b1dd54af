/**
 * The images of a generation request (docs/protocol.md §2, what a model sees): the
 * asset sheets, shrunk when the model wants a bounded side, then as many video frames as
 * the model's caps leave beside them, sampled for exactly that many so none are decoded
 * only to be thrown away. Shared by the single-pass graph and the agent, whose drafts
 * carry the same images as a single-pass request.
 */
import fs from "node:fs/promises";
import { IwrError } from "../errors.ts";
import { sampleFrames } from "../media/frames.ts";
import { frameBudget, resizeToMaxSide, selectImages } from "../media/images.ts";
import type { ModelSpec } from "../models/index.ts";
import { type ProtocolProfile, profileRules } from "../protocol.ts";
import type { TaskInputs } from "../tasks/inputs.ts";

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
export async function requestImages(inputs: Pick<TaskInputs, "assetSheetPaths" | "videoPath">, spec: ModelSpec, protocol: ProtocolProfile = "corrected") {
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
