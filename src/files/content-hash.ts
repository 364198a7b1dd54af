/**
 * The one content hash the project names things by: cache keys, stored images, request
 * keys, provenance. One helper, so that two places hashing the same bytes cannot disagree
 * on the algorithm or the encoding.
 */
import { createHash } from "node:crypto";

/** Lower-case hex SHA-256 of the bytes (a string is hashed as its UTF-8 bytes). */
export function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
