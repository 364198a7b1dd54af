/** Once per test run: removes the run's image readings, video states, request images and media checks folders (set in vitest.config.ts) at the end. */
import fs from "node:fs";

export default function setup(): () => void {
  const ocrDir = process.env.IWR_OCR_CACHE_DIR;
  const statesDir = process.env.IWR_STATES_CACHE_DIR;
  const imagesDir = process.env.IWR_REQUEST_IMAGES_DIR;
  const mediaChecksDir = process.env.IWR_MEDIA_CHECKS_DIR;
  return () => {
    if (ocrDir && /iwr-test-ocr-text-\d+$/.test(ocrDir)) fs.rmSync(ocrDir, { recursive: true, force: true });
    if (statesDir && /iwr-test-video-states-\d+$/.test(statesDir)) fs.rmSync(statesDir, { recursive: true, force: true });
    if (imagesDir && /iwr-test-request-images-\d+$/.test(imagesDir)) fs.rmSync(imagesDir, { recursive: true, force: true });
    if (mediaChecksDir && /iwr-test-media-checks-\d+$/.test(mediaChecksDir)) fs.rmSync(mediaChecksDir, { recursive: true, force: true });
  };
}
