/**
 * Fields of the header lines ffmpeg prints on stderr, read the same way wherever they are
 * read: by the probe's fallback (`ffmpeg -i`, probe.ts) and by the video-state pass's own
 * log (ffmpeg-log.ts).
 */

export interface FrameSize {
  width: number;
  height: number;
}

/** Splits on commas that are not inside parentheses: "yuv420p(tv, bt709)" stays whole. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "(" || char === "[") depth++;
    if (char === ")" || char === "]") depth = Math.max(0, depth - 1);
    if (char === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
    } else current += char;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** The first "W x H" field of a stream line's fields ("gray(pc, bt709), 320x180 [SAR 1:1 …]"), never a codec tag's hex. */
export function frameSizeOf(streamFields: string[]): FrameSize | undefined {
  const size = streamFields.map((part) => /^(\d+)x(\d+)/.exec(part)).find((match) => match);
  return size ? { width: Number(size[1]), height: Number(size[2]) } : undefined;
}

/** Seconds of a "Duration: HH:MM:SS.ss" field; undefined for "Duration: N/A" or none. */
export function durationOf(text: string): number | undefined {
  const duration = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(text);
  return duration ? Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]) : undefined;
}

/** How a stream's YUV samples are to be read as colours: what ffmpeg prints as "yuv420p(tv, bt709/…)". */
export interface PixelLayout {
  pixelFormat: string;
  /** Limited ("tv", 16–235) unless the stream says "pc"; swscale's default too. */
  range: "limited" | "full";
  /** The colour matrix named first ("bt709" of "bt709/unknown/unknown"), or undefined when none is declared. */
  matrix?: string;
}

/**
 * The pixel format field of a stream line's fields, with the range and matrix in its
 * parentheses: the field right after the codec ("rawvideo (I420 / 0x30323449)").
 */
export function pixelLayoutOf(streamFields: string[]): PixelLayout | undefined {
  const field = streamFields[1];
  const format = field ? /^([a-z0-9_]+)(?:\((.*)\))?$/.exec(field) : null;
  if (!format) return undefined;
  const details = (format[2] ?? "").split(",").map((part) => part.trim());
  const matrix = details.map((part) => part.split("/")[0]!).find((name) => /^(bt|smpte|fcc|ycgco|gbr|chroma|ictcp)/.test(name));
  return { pixelFormat: format[1]!, range: details.includes("pc") ? "full" : "limited", ...(matrix ? { matrix } : {}) };
}
