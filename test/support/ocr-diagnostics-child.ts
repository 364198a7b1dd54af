/**
 * Run as its own process by test/evaluator/ocr-diagnostics.test.ts, so that the test sees
 * everything the OCR engine prints on stderr. It reads a picture that is not an image and a
 * blank PNG without resolution metadata, and (read as one line) slivers one and two pixels
 * wide, which make Tesseract and Leptonica print their diagnostics: `plain` with tesseract.js's own worker script, `filtered` with ours
 * (src/metrics/ocr-worker.cjs, the only difference), `evaluator` through the
 * evaluator's reader. It prints on stdout what each read gave.
 */

import { createRequire } from "node:module";
import path from "node:path";
import sharp from "sharp";
import { createWorker, OEM } from "tesseract.js";
import { EVALUATOR_SETTINGS } from "../../src/evaluator/settings.ts";
import { readImageText, shutdownOcr } from "../../src/metrics/ocr.ts";

const mode = process.argv[2];
const notAnImage = Buffer.from("these bytes are not a picture");
const blank = await sharp({ create: { width: 200, height: 100, channels: 3, background: "#ffffff" } })
  .png()
  .toBuffer();
// A line one or two pixels wide, read as one text line: the engine skips it, and says so.
const sliver = (width: number, height: number) =>
  sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="${width}" height="${height}" fill="#000"/>` +
        `<rect width="${width}" height="${height / 2}" fill="#fff"/></svg>`,
    ),
  )
    .png()
    .toBuffer();
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => "read",
    () => "rejected",
  );

// The engine runs in a worker thread, whose stderr reaches ours through a message port:
// ending the worker right after its last read can drop lines still on the way (seen under
// load in CI). So every mode waits until our stderr has been quiet for a while, the same
// wait whether the lines are expected or not, before it ends the engine.
let lastStderrWrite = Date.now();
const writeStderr = process.stderr.write.bind(process.stderr);
process.stderr.write = ((...args: Parameters<typeof writeStderr>) => {
  lastStderrWrite = Date.now();
  return writeStderr(...args);
}) as typeof process.stderr.write;
async function untilStderrQuiet(quietMs = 1500, maxMs = 15_000): Promise<void> {
  const started = Date.now();
  while (Date.now() - lastStderrWrite < quietMs && Date.now() - started < maxMs) await new Promise((resolve) => setTimeout(resolve, 100));
}

if (mode === "evaluator") {
  console.log(`not-an-image: ${await outcome(readImageText(notAnImage))}`);
  console.log(`blank: ${await outcome(readImageText(blank))}`);
  await untilStderrQuiet();
  await shutdownOcr();
} else {
  const require = createRequire(import.meta.url);
  const langPath = path.join(path.dirname(require.resolve("@tesseract.js-data/eng/package.json")), EVALUATOR_SETTINGS.ocr.trainedData);
  const workerPath = mode === "filtered" ? { workerPath: path.resolve("src/metrics/ocr-worker.cjs") } : {};
  const worker = await createWorker("eng", OEM.LSTM_ONLY, { langPath, cacheMethod: "none", gzip: true, ...workerPath, errorHandler: () => undefined });
  console.log(`not-an-image: ${await outcome(worker.recognize(notAnImage))}`);
  console.log(`blank: ${await outcome(worker.recognize(blank))}`);
  await worker.setParameters({ tessedit_pageseg_mode: "7" as never });
  for (const [width, height] of [
    [2, 36],
    [1, 30],
  ] as const)
    console.log(`sliver ${width}x${height}: ${await outcome(worker.recognize(await sliver(width, height)))}`);
  await untilStderrQuiet();
  await worker.terminate();
}
