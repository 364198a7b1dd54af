/**
 * Capturing the interaction as timestamped frames through CDP `Page.startScreencast`.
 * Chromium pushes a frame whenever the page repaints (not on a timer), stamped with
 * the compositor's wall-clock time; holding each frame until the next one gives the
 * true timeline, which `encodeFramesToMp4` turns into constant-frame-rate video.
 * Cheaper than a screenshot loop on our 2 cores, and it never misses a short state.
 */
import fs from "node:fs";
import path from "node:path";
import type { BrowserContext, CDPSession, Page } from "playwright";
import { IwrError } from "../errors.ts";
import type { TimedFrame } from "../media/encode.ts";

export interface ScreencastRecording {
  readonly frames: readonly TimedFrame[];
  /** When capture stopped, on the frames' clock (seconds since the epoch). */
  readonly endSec: number;
}

export interface Screencast {
  /** Frames arriving while suppressed are dropped (used while the cursor is hidden for a checkpoint). */
  suppress(on: boolean): void;
  stop(): Promise<ScreencastRecording>;
}

export async function startScreencast(context: BrowserContext, page: Page, framesDir: string, size: { width: number; height: number }): Promise<Screencast> {
  fs.mkdirSync(framesDir, { recursive: true });
  const session: CDPSession = await context.newCDPSession(page);
  const frames: TimedFrame[] = [];
  const writes: Promise<void>[] = [];
  let suppressed = false;
  let stopped = false;
  session.on("Page.screencastFrame", (event) => {
    // Ack first: Chromium sends no further frame until the previous one is acknowledged.
    void session.send("Page.screencastFrameAck", { sessionId: event.sessionId }).catch(() => undefined);
    if (suppressed || stopped) return;
    const timeSec = event.metadata.timestamp ?? Date.now() / 1000;
    const file = path.join(framesDir, `${String(frames.length).padStart(6, "0")}.jpg`);
    frames.push({ file, timeSec });
    writes.push(fs.promises.writeFile(file, Buffer.from(event.data, "base64")));
  });
  await session.send("Page.startScreencast", { format: "jpeg", quality: 90, maxWidth: size.width, maxHeight: size.height, everyNthFrame: 1 });
  return {
    suppress(on: boolean) {
      suppressed = on;
    },
    async stop() {
      const endSec = Date.now() / 1000;
      stopped = true;
      await session.send("Page.stopScreencast").catch(() => undefined);
      await session.detach().catch(() => undefined);
      try {
        await Promise.all(writes);
      } catch (error) {
        throw new IwrError("IO", `cannot write captured frames into ${framesDir}: ${error instanceof Error ? error.message : String(error)}`);
      }
      return { frames, endSec };
    },
  };
}
