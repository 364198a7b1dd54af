/**
 * Reads the stderr of an ffmpeg run started with `-hide_banner -nostats -v level+info`:
 * every line carries its level ("[info] ", "[error] ", after any "[h264 @ 0x…] " tag).
 * The info lines are the headers ffmpeg prints before it writes a frame: the input's
 * duration, and each output's stream with the frame size ffmpeg itself chose (after its
 * scaling and its turning of rotated videos) and its pixel format, range and matrix. Reading the sizes there instead of probing
 * the file first saves starting a second process (ffprobe costs about as much CPU as a
 * quarter of decoding a 20 s recording), and the sizes cannot disagree with the frames.
 * The error lines, a bounded tail of them, name what went wrong.
 */
import { durationOf, type FrameSize, frameSizeOf, type PixelLayout, pixelLayoutOf, splitTopLevel } from "./ffmpeg-header-fields.ts";

export type { FrameSize, PixelLayout };

/** One output stream as ffmpeg announced it: the frame size it chose, and how its pixels are laid out. */
export interface OutputStream extends FrameSize {
  layout?: PixelLayout;
}

export interface FfmpegHeader {
  /** The input's duration as its container states it (absent for "N/A", as in many WebM files). */
  durationSec?: number;
  /** Each output's stream, by output number. */
  outputs: OutputStream[];
}

const LEVEL = /^(?:\[[^\]]*\] )*?\[(panic|fatal|error|warning|info|verbose|debug|trace)\] (.*)$/;
const MAX_ERROR_CHARS = 4000;

export class FfmpegLog {
  private pending = "";
  private errorLines: string[] = [];
  private errorChars = 0;
  private section: { kind: "Input" | "Output"; index: number } | undefined;
  private durationSec: number | undefined;
  private readonly outputs: OutputStream[] = [];
  private announced = false;

  /** `onHeader` is called once, when every one of `outputCount` outputs has its frame size. */
  constructor(
    private readonly outputCount: number,
    private readonly onHeader: (header: FfmpegHeader) => void,
  ) {}

  get header(): FfmpegHeader | undefined {
    return this.announced ? { ...(this.durationSec !== undefined ? { durationSec: this.durationSec } : {}), outputs: [...this.outputs] } : undefined;
  }

  /** The error and fatal lines seen so far (the last few thousand characters, whole lines). */
  get errors(): string {
    return this.errorLines.join("\n");
  }

  push(chunk: Buffer | string): void {
    this.pending += chunk.toString();
    const lines = this.pending.split(/\r?\n/);
    this.pending = lines.pop() ?? "";
    // A line that never ends is cut rather than held without bound.
    if (this.pending.length > MAX_ERROR_CHARS) this.pending = this.pending.slice(-MAX_ERROR_CHARS);
    for (const line of lines) this.read(line);
  }

  /** The end of the stream: a last line without a line break counts too. */
  end(): void {
    if (this.pending) this.read(this.pending);
    this.pending = "";
  }

  private read(line: string): void {
    const parsed = LEVEL.exec(line);
    // A line without a level (an ffmpeg built without that flag) is treated as an error line, so nothing is lost.
    const [level, text] = parsed ? [parsed[1]!, parsed[2]!] : ["error", line];
    if (level === "info") {
      this.readInfo(text);
      return;
    }
    if (level === "panic" || level === "fatal" || level === "error") this.keepError(line.replace(/\[(panic|fatal|error)\] /, ""));
  }

  private readInfo(text: string): void {
    const section = /^(Input|Output) #(\d+)/.exec(text);
    if (section) {
      this.section = { kind: section[1] as "Input" | "Output", index: Number(section[2]) };
      return;
    }
    if (this.section?.kind === "Input" && this.section.index === 0) {
      if (/^\s*Duration: /.test(text)) this.durationSec = durationOf(text);
      return;
    }
    if (this.section?.kind !== "Output") return;
    const stream = /^\s*Stream #\d+:\d+.*?: Video: (.*)$/.exec(text);
    const fields = stream ? splitTopLevel(stream[1]!) : [];
    const size = frameSizeOf(fields);
    if (!size || this.outputs[this.section.index]) return;
    const layout = pixelLayoutOf(fields);
    this.outputs[this.section.index] = { ...size, ...(layout ? { layout } : {}) };
    if (!this.announced && this.outputs.filter(Boolean).length === this.outputCount) {
      this.announced = true;
      this.onHeader(this.header!);
    }
  }

  private keepError(line: string): void {
    line = line.slice(0, MAX_ERROR_CHARS);
    this.errorLines.push(line);
    this.errorChars += line.length + 1;
    while (this.errorChars > MAX_ERROR_CHARS && this.errorLines.length > 1) this.errorChars -= this.errorLines.shift()!.length + 1;
  }
}
