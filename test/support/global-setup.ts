/** Once per test run: removes the run's OCR text folder (set in vitest.config.ts) at the end. */
import fs from "node:fs";

export default function setup(): () => void {
  const dir = process.env.IWR_OCR_CACHE_DIR;
  return () => {
    if (dir && /iwr-test-ocr-text-\d+$/.test(dir)) fs.rmSync(dir, { recursive: true, force: true });
  };
}
