/*
 * The Tesseract worker thread, at a lower scheduling priority: tesseract.js's own Node
 * worker script, loaded after the thread raises its nice value. OCR is work that can
 * wait a moment; a replay cannot (its screenshots are timed by the protocol), so when
 * both want the CPUs the browser and the replay loop go first. What OCR reads does not
 * change, only when.
 *
 * Linux only: there the nice value belongs to the calling thread, so only this worker
 * is lowered. Elsewhere it would lower the whole process, so the worker is left as is.
 */
"use strict";
const os = require("node:os");

/** Nice value of the OCR threads (0 is normal, 19 the lowest priority). */
const OCR_THREAD_NICENESS = 10;

if (process.platform === "linux") {
  try {
    os.setPriority(0, OCR_THREAD_NICENESS);
  } catch {
    // Not permitted here (a sandbox without setpriority): OCR runs at normal priority.
  }
}
/*
 * Leptonica and Tesseract print their diagnostics straight to stderr from inside the
 * engine ("Error in boxClipToRectangle: box outside rectangle", "Detected 9 diacritics",
 * "Empty page!!" while reading screens that work; "Image too small to scale!! (2x36 vs min
 * width of 3)" and "Line cannot be recognized!!" for a line one or two pixels wide, which
 * it skips; "Image file /input cannot be read!"),
 * in the middle of a run's output.
 * Those lines are dropped here. Nothing is lost by it: a clipped box is clipped by the
 * engine itself, and an image it cannot read fails the job, whose error the caller
 * records. Every other line passes.
 */
const ENGINE_DIAGNOSTIC_LINES = [
  "Error in [A-Za-z0-9_]+: .*",
  "Warning in [A-Za-z0-9_]+: .*",
  "Image file \\S+ cannot be read!",
  "Warning[.:]? Invalid resolution \\d+ dpi\\. Using \\d+ instead\\.",
  "Estimating resolution as \\d+",
  "Detected \\d+ diacritics",
  "Empty page!*",
  "Too few characters\\. Skipping this page",
  "Image too small to scale!* \\(\\d+x\\d+ vs min width of \\d+\\)",
  "Line cannot be recognized!*",
];
const ENGINE_DIAGNOSTIC = new RegExp(`^(${ENGINE_DIAGNOSTIC_LINES.join("|")})\\s*$`);
const writeStderr = process.stderr.write.bind(process.stderr);
// The engine ends some diagnostics with a separate empty line: dropped with them.
let afterDiagnostic = false;
process.stderr.write = (chunk, ...rest) => {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  const kept = text
    .split(/(?<=\n)/)
    .filter((line) => {
      const bare = line.replace(/\n$/, "");
      const drop = ENGINE_DIAGNOSTIC.test(bare) || (afterDiagnostic && bare.trim() === "");
      afterDiagnostic = drop;
      return !drop;
    })
    .join("");
  if (kept === "") {
    const callback = rest.find((argument) => typeof argument === "function");
    if (callback) callback();
    return true;
  }
  return writeStderr(kept, ...rest);
};

require("tesseract.js/src/worker-script/node/index.js");
