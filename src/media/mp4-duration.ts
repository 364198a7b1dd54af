/**
 * The duration of an MP4/MOV file read from its movie header (`moov` → `mvhd`) in
 * process. Frame sampling needs the duration before it can start ffmpeg; reading a few
 * header bytes avoids starting ffprobe for every video (a process start costs as much
 * as sampling a short clip). Anything unexpected returns undefined and the caller
 * falls back to probeVideo, which handles every container.
 */
import fs from "node:fs/promises";

const BOX_HEADER = 8;
/** A movie header bigger than this is not what we expect: leave it to ffprobe. */
const MAX_MOOV_BYTES = 64 * 1024 * 1024;

async function readAt(file: fs.FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** Seconds from an `mvhd` box body (after its 8-byte header), or undefined. */
function mvhdSeconds(body: Buffer): number | undefined {
  const version = body[0];
  // version 0: 4-byte creation/modification times and duration; version 1: 8-byte ones.
  const [timescaleAt, duration] =
    version === 0 && body.length >= 20
      ? [12, body.readUInt32BE(16)]
      : version === 1 && body.length >= 32
        ? [20, Number(body.readBigUInt64BE(24))]
        : [undefined, undefined];
  if (timescaleAt === undefined || duration === undefined) return undefined;
  const timescale = body.readUInt32BE(timescaleAt);
  const seconds = duration / timescale;
  return timescale > 0 && duration > 0 && Number.isFinite(seconds) ? seconds : undefined;
}

export async function readMp4DurationSec(videoPath: string): Promise<number | undefined> {
  let file: fs.FileHandle | undefined;
  try {
    file = await fs.open(videoPath, "r");
    const { size } = await file.stat();
    let offset = 0;
    while (offset + BOX_HEADER <= size) {
      const header = await readAt(file, offset, 16);
      if (header.length < BOX_HEADER) return undefined;
      let boxSize = header.readUInt32BE(0);
      const type = header.toString("latin1", 4, 8);
      let headerSize = BOX_HEADER;
      if (boxSize === 1) {
        if (header.length < 16) return undefined;
        boxSize = Number(header.readBigUInt64BE(8));
        headerSize = 16;
      } else if (boxSize === 0) {
        boxSize = size - offset;
      }
      if (boxSize < headerSize) return undefined;
      if (type === "moov") {
        if (boxSize > MAX_MOOV_BYTES) return undefined;
        const moov = await readAt(file, offset + headerSize, boxSize - headerSize);
        for (let child = 0; child + BOX_HEADER <= moov.length; ) {
          const childSize = moov.readUInt32BE(child);
          if (moov.toString("latin1", child + 4, child + 8) === "mvhd")
            return mvhdSeconds(moov.subarray(child + BOX_HEADER, child + Math.max(childSize, BOX_HEADER)));
          if (childSize < BOX_HEADER) return undefined;
          child += childSize;
        }
        return undefined;
      }
      offset += boxSize;
    }
    return undefined;
  } catch {
    // Unreadable or not an MP4: the caller's fallback reports it properly.
    return undefined;
  } finally {
    await file?.close();
  }
}
