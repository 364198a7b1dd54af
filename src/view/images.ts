/**
 * The view's images: thumbnails made once and kept in a cache folder outside the run
 * folder (`.cache/view/`, IWR_VIEW_CACHE_DIR or --cache-dir), and frames of a task's video
 * at a given moment (the self-check's aligned state) when the self-check's own frame file
 * is not on this machine. A thumbnail's name is the hash of the source's path, size,
 * modification time and width, so a changed source gets a new one.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pLimit from "p-limit";
import sharp from "sharp";
import { IwrError } from "../errors.ts";
import { writeFileAtomic } from "../files/atomic.ts";
import { findFfmpeg } from "../setup/find-tools.ts";

/** Where the view keeps its thumbnails unless told otherwise: `.cache/view`, or IWR_VIEW_CACHE_DIR. */
export function defaultViewCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.IWR_VIEW_CACHE_DIR || path.join(".cache", "view"));
}

/** Thumbnail widths the view asks for. */
export const THUMB_WIDTHS = { small: 160, medium: 360 } as const;
export type ThumbSize = keyof typeof THUMB_WIDTHS;

/** Images resized at once: the rest wait, so a page of lazy images does not take every core. */
const RESIZE_CONCURRENCY = 2;

export class ViewImages {
  readonly cacheDir: string;
  private readonly limit = pLimit(RESIZE_CONCURRENCY);
  private readonly pending = new Map<string, Promise<string>>();
  /** Thumbnails made by this process (the rest came from the cache). */
  made = 0;

  constructor(cacheDir: string, runDir: string) {
    this.cacheDir = path.resolve(cacheDir);
    const run = path.resolve(runDir);
    // The view never writes into the run folder: refuse a cache inside it.
    if (this.cacheDir === run || this.cacheDir.startsWith(`${run}${path.sep}`))
      throw new IwrError(
        "CONFIG_INVALID",
        `--cache-dir: ${this.cacheDir} is inside the run folder ${run}; the view never writes there (name a folder outside it)`,
      );
  }

  /** A JPEG thumbnail of `source` (made once, then read from the cache); its path. */
  async thumbnail(source: string, size: ThumbSize): Promise<string> {
    const stat = await fs.promises.stat(source);
    const width = THUMB_WIDTHS[size];
    const key = createHash("sha256")
      .update(`${path.resolve(source)}\u0000${stat.size}\u0000${stat.mtimeMs}\u0000${width}`)
      .digest("hex");
    const file = path.join(this.cacheDir, "thumbs", key.slice(0, 2), `${key}.jpg`);
    return this.once(file, async () => {
      const jpeg = await this.limit(() => sharp(source).resize({ width, withoutEnlargement: true }).jpeg({ quality: 72 }).toBuffer());
      await fs.promises.mkdir(path.dirname(file), { recursive: true });
      await writeFileAtomic(file, jpeg);
      this.made++;
    });
  }

  /** A PNG of `video` at `sec` seconds (ffmpeg, once per video and moment); its path. */
  async videoFrame(video: string, sec: number): Promise<string> {
    const stat = await fs.promises.stat(video);
    const key = createHash("sha256")
      .update(`${path.resolve(video)}\u0000${stat.size}\u0000${stat.mtimeMs}\u0000${sec.toFixed(3)}`)
      .digest("hex");
    const file = path.join(this.cacheDir, "frames", `${key}.png`);
    return this.once(file, async () => {
      const png = await extractFrame(video, sec);
      await fs.promises.mkdir(path.dirname(file), { recursive: true });
      await writeFileAtomic(file, png);
    });
  }

  /** Makes `file` with `make` unless it exists; concurrent requests for one file share the work. */
  private once(file: string, make: () => Promise<void>): Promise<string> {
    if (fs.existsSync(file)) return Promise.resolve(file);
    let pending = this.pending.get(file);
    if (!pending) {
      pending = make()
        .then(() => file)
        .finally(() => this.pending.delete(file));
      this.pending.set(file, pending);
    }
    return pending;
  }
}

/** One frame of a video as PNG bytes. */
function extractFrame(video: string, sec: number): Promise<Buffer> {
  const ffmpeg = findFfmpeg();
  if (!ffmpeg) return Promise.reject(new IwrError("SETUP_MISSING", "ffmpeg is not installed (iwr setup installs it): no video frames"));
  return new Promise((resolve, reject) => {
    const args = ["-hide_banner", "-loglevel", "error", "-ss", sec.toFixed(3), "-i", video, "-frames:v", "1", "-f", "image2pipe", "-vcodec", "png", "pipe:1"];
    const child = spawn(ffmpeg.path, args, { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const png = Buffer.concat(chunks);
      if (code === 0 && png.length > 0) resolve(png);
      else reject(new IwrError("MEDIA", `ffmpeg could not take the frame at ${sec} s of ${video}: ${stderr.trim().slice(-300) || `exit ${code}`}`));
    });
  });
}
