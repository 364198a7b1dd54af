/**
 * The one builder of a user message for a vision model: the prompt text, then the images
 * in order as data URLs (`{type: "image_url", image_url: {url}}` parts, the form every
 * OpenAI-compatible endpoint takes). An image is PNG bytes, or a stored image file read
 * here, at send time, so that graph state holds paths and never image data.
 *
 * The message as built is what the response cache keys on: a text-only prompt stays a
 * plain string (as it has always been sent), a prompt with images (even none) a list of
 * parts.
 */
import fs from "node:fs";
import { HumanMessage } from "@langchain/core/messages";
import { IwrError } from "../errors.ts";

/** PNG bytes, or a PNG or JPEG file on disk. */
export type MessageImage = Buffer | { file: string };

function imageDataUrl(image: MessageImage): string {
  if (Buffer.isBuffer(image)) return `data:image/png;base64,${image.toString("base64")}`;
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(image.file);
  } catch (error) {
    throw new IwrError("MEDIA", `cannot read the request image ${image.file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      file: image.file,
    });
  }
  // JPEG frames (the official profile sends frames as the harness does) keep their type.
  const type = /\.jpe?g$/i.test(image.file) ? "image/jpeg" : "image/png";
  return `data:${type};base64,${bytes.toString("base64")}`;
}

/** A user message: `text` alone, or `text` followed by `images`. */
export function userMessage(text: string, images?: readonly MessageImage[]): HumanMessage {
  if (images === undefined) return new HumanMessage(text);
  return new HumanMessage({
    content: [{ type: "text", text }, ...images.map((image) => ({ type: "image_url" as const, image_url: { url: imageDataUrl(image) } }))],
  });
}
