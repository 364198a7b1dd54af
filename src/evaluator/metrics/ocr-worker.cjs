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
require("tesseract.js/src/worker-script/node/index.js");
