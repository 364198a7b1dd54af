/**
 * Worker threads inside LangGraph's dev server. The dev server starts the process that
 * serves the graph with `--import <@langchain/langgraph-api>/dist/preload.mjs`, a hook that
 * parses the server's definition from the process's last argument. Node gives every
 * worker thread its parent's command-line options unless told otherwise, so the hook runs
 * in each worker too, where the last argument is the worker's script path: it throws, and
 * the worker never starts. The self-check's OCR pool (tesseract.js) is such a worker
 * (found by test/agent/studio.long.test.ts, where the run stopped at its first self-check).
 *
 * The hook steers how a thread loads the graph's modules; our workers load none. So, in a
 * process that carries it, a worker started without `argv` gets the same options less that
 * one. A worker started with `argv` keeps them all: the dev server's own schema parser
 * passes the definition that way, so the hook works there. Imported first by studio.ts,
 * the Studio entry, before anything that starts workers or keeps a reference to the Worker
 * class (tesseract.js takes its own at load); nothing else in the project loads it.
 *
 * An explicit option list is checked more strictly than an inherited one (V8 and
 * process-wide flags are refused); the dev server starts this process with module-loading
 * flags only, which workers accept.
 */
import { createRequire, syncBuiltinESMExports } from "node:module";
import type { WorkerOptions } from "node:worker_threads";

const PRELOAD = /langgraph-api[\\/]dist[\\/]preload\.mjs$/;

/** The options less the dev server's preload (`--import <preload>` or `--import=<preload>`). */
export function withoutDevServerPreload(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < execArgv.length; index++) {
    const argument = execArgv[index]!;
    if (argument === "--import" && PRELOAD.test(execArgv[index + 1] ?? "")) index += 1;
    else if (!(argument.startsWith("--import=") && PRELOAD.test(argument.slice("--import=".length)))) kept.push(argument);
  }
  return kept;
}

const inherited = withoutDevServerPreload(process.execArgv);
if (inherited.length !== process.execArgv.length) {
  const workerThreads: { Worker: typeof import("node:worker_threads").Worker } = createRequire(import.meta.url)("node:worker_threads");
  const NodeWorker = workerThreads.Worker;
  workerThreads.Worker = class WorkerWithoutDevServerPreload extends NodeWorker {
    constructor(filename: string | URL, options: WorkerOptions = {}) {
      super(filename, options.execArgv !== undefined || options.argv !== undefined ? options : { ...options, execArgv: inherited });
    }
  };
  syncBuiltinESMExports();
}
