/**
 * `iwr view`'s web server: Express on 127.0.0.1 only, read-only over the run folder (GET
 * routes only; nothing is written there), serving the page (src/view/page/, Preact and htm
 * from node_modules: no build step, no CDN), the run's data as JSON, images (thumbnails
 * from the cache folder) and each cell's trace.zip. Requests naming another host are
 * refused (a page elsewhere cannot reach the run through DNS rebinding).
 *
 * Live mode: the index is rescanned every `pollMs`; pages listen on /api/events (server-sent
 * events) and reload their data when the version changes.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express, { type NextFunction, type Request, type Response } from "express";
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { FAILURE_KIND_LABELS, FAILURE_KINDS, isCalibrationKind } from "../report/failures.ts";
import { agentFiles, candidateFiles, RESULT_FILES } from "../results/layout.ts";
import { draftDiff } from "./agent-timeline.ts";
import { alignedState, cellDetail, readSelfCheck } from "./cell-detail.ts";
import { type ThumbSize, ViewImages } from "./images.ts";
import { cellId, type IndexedCell, RunIndex } from "./run-index.ts";
import { cellsJson, runSummaryJson } from "./summary.ts";
import { importMap, VENDOR_MODULES } from "./vendor.ts";

const logger = log("view");
const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));

export interface ViewServerOptions {
  runDir: string;
  /** 0 (default) picks a free port. */
  port?: number;
  cacheDir: string;
  /** A task file instead of run.json's (a run folder moved from another machine). */
  tasksFile?: string;
  /** How often the run folder is rescanned for new cells (ms); 0 turns live mode off. Default 2000. */
  pollMs?: number;
}

export interface ViewServer {
  url: string;
  index: RunIndex;
  images: ViewImages;
  /** Milliseconds spent reading the run folder before the server listened. */
  indexMs: number;
  close(): Promise<void>;
}

export const VIEW_HOST = "127.0.0.1";

export async function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const images = new ViewImages(options.cacheDir, options.runDir);
  const started = Date.now();
  const index = await RunIndex.open(options.runDir, options.tasksFile ? { tasksFile: options.tasksFile } : {});
  warm(index);
  const indexMs = Date.now() - started;
  const listeners = new Set<Response>();
  const app = buildApp(index, images, listeners);
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(options.port ?? 0, VIEW_HOST, (error?: Error) => (error ? reject(error) : resolve(listening)));
    listening.once("error", reject);
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    throw new IwrError(
      "IO",
      code === "EADDRINUSE" ? `--port ${options.port}: that port is in use on ${VIEW_HOST}; pick another or leave --port out` : errorMessage(error),
    );
  });
  const port = (server.address() as AddressInfo).port;
  const pollMs = options.pollMs ?? 2000;
  const poll =
    pollMs > 0
      ? setInterval(() => {
          try {
            if (!index.refresh()) return;
            warm(index);
            for (const listener of listeners) listener.write(`event: version\ndata: ${index.version}\n\n`);
          } catch (error) {
            logger.warn(`rescanning ${index.runDir} failed: ${errorMessage(error)}`);
          }
        }, pollMs)
      : undefined;
  poll?.unref();
  return {
    url: `http://${VIEW_HOST}:${port}/`,
    index,
    images,
    indexMs,
    close: async () => {
      if (poll) clearInterval(poll);
      for (const listener of listeners) listener.end();
      listeners.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Computes the lists every page asks for, so that no page waits for them (the intervals' resamples take a while at thousands of cells). */
function warm(index: RunIndex): void {
  runSummaryJson(index);
  cellsJson(index);
}

/** An error the routes answer with its status (404 for what the run does not have). */
class NotFound extends Error {}

/**
 * Files the server chose itself (a run's screenshots, the thumbnails it made), given as
 * absolute paths: send serves them even under a dot folder. By default it refuses any path
 * with a dot segment, and the default thumbnail cache is `.cache/view/` in the checkout, so
 * every image of a real run failed while the tests' cache folders had no dot.
 */
// A new object each time: express writes its defaults into the options it is given.
const sendOptions = () => ({ dotfiles: "allow" as const });

function buildApp(index: RunIndex, images: ViewImages, listeners: Set<Response>): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", "strong");
  const map = JSON.stringify(importMap());
  const mapHash = createHash("sha256").update(map).digest("base64");
  const shell = fs.readFileSync(path.join(PAGE_DIR, "index.html"), "utf8").replace("{{IMPORT_MAP}}", map);

  // Only our own host names: a request for another host is a page elsewhere trying to read the run.
  app.use((request: Request, response: Response, next: NextFunction) => {
    const host = (request.headers.host ?? "").replace(/:\d+$/, "");
    if (host !== VIEW_HOST && host !== "localhost") {
      response.status(403).type("text").send("iwr view answers requests for 127.0.0.1 and localhost only");
      return;
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.status(405).type("text").send("iwr view is read-only");
      return;
    }
    response.setHeader(
      "Content-Security-Policy",
      `default-src 'self'; script-src 'self' 'sha256-${mapHash}'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'`,
    );
    response.setHeader("X-Content-Type-Options", "nosniff");
    next();
  });

  app.get("/", (_request, response) => {
    response.type("html").setHeader("Cache-Control", "no-store");
    response.send(shell);
  });
  app.use("/app", express.static(PAGE_DIR, { index: false, fallthrough: false, ...sendOptions() }));
  for (const [name, file] of Object.entries(VENDOR_MODULES)) {
    app.get(`/vendor/${name}`, (_request, response) => {
      response.type("text/javascript").setHeader("Cache-Control", "max-age=3600");
      response.sendFile(file, sendOptions());
    });
  }

  const json = (handler: (request: Request) => unknown) => (request: Request, response: Response, next: NextFunction) => {
    try {
      response.setHeader("Cache-Control", "no-store");
      response.json(handler(request));
    } catch (error) {
      next(error);
    }
  };
  const cellOf = (request: Request): IndexedCell => {
    const { arm, repeat, task } = request.params as Record<string, string>;
    const cell = index.cell(cellId(String(arm), Number(repeat), Number(task)));
    if (!cell) throw new NotFound(`no finished cell ${arm} repeat ${repeat} task ${task} in ${index.runDir}`);
    return cell;
  };
  const integer = (text: unknown, name: string): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 0) throw new NotFound(`${name}: expected a whole number, got '${String(text)}'`);
    return value;
  };

  app.get(
    "/api/run",
    json(() => ({
      name: index.name,
      runDir: index.runDir,
      startedAt: index.run.startedAt,
      evaluator: index.run.evaluator,
      arms: index.arms.map((arm) => ({ name: arm.name, kind: arm.kind, calibration: isCalibrationKind(arm.kind) })),
      expectedCells: index.expectedCells,
      finishedCells: index.cells().length,
      version: index.version,
      tasksFile: index.tasksFile,
      ...(index.tasksProblem ? { tasksProblem: index.tasksProblem } : {}),
      failureKinds: FAILURE_KINDS.map((kind) => ({ kind, label: FAILURE_KIND_LABELS[kind] })),
      cacheDir: images.cacheDir,
    })),
  );
  const jsonText = (make: () => string) => (_request: Request, response: Response, next: NextFunction) => {
    try {
      response.setHeader("Cache-Control", "no-store");
      response.type("json").send(make());
    } catch (error) {
      next(error);
    }
  };
  app.get(
    "/api/summary",
    jsonText(() => runSummaryJson(index)),
  );
  app.get(
    "/api/cells",
    jsonText(() => cellsJson(index)),
  );
  app.get(
    "/api/cell/:arm/:repeat/:task",
    json((request) => ({ ...cellDetail(index, cellOf(request)), version: index.version })),
  );
  app.get(
    "/api/cell/:arm/:repeat/:task/diff",
    json((request) => ({ diff: draftDiff(cellOf(request), integer(request.query.from, "from"), integer(request.query.to, "to")) })),
  );
  app.get("/api/events", (request, response) => {
    response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store", Connection: "keep-alive" });
    response.write(`event: version\ndata: ${index.version}\n\n`);
    listeners.add(response);
    request.on("close", () => listeners.delete(response));
  });

  const sendImage = async (response: Response, file: string | undefined, size: unknown) => {
    if (!file || !fs.existsSync(file)) throw new NotFound("no such image");
    if (size === "full") {
      response.setHeader("Cache-Control", "max-age=60");
      response.sendFile(file, sendOptions());
      return;
    }
    const thumb = await images.thumbnail(file, size === "small" ? "small" : ("medium" satisfies ThumbSize));
    response.setHeader("Cache-Control", "max-age=3600");
    response.type("image/jpeg").sendFile(thumb, sendOptions());
  };
  const image =
    (find: (request: Request) => Promise<string | undefined> | string | undefined) => async (request: Request, response: Response, next: NextFunction) => {
      try {
        await sendImage(response, await find(request), request.query.size);
      } catch (error) {
        next(error);
      }
    };
  app.get(
    "/img/checkpoint/:task/:k",
    image((request) => {
      const task = index.tasks.get(integer(request.params.task, "task"));
      return task?.truth.checkpointPaths[integer(request.params.k, "checkpoint")];
    }),
  );
  app.get(
    "/img/:arm/:repeat/:task/evalpoint/:n",
    image((request) => candidateFiles(cellOf(request).scores.dir).evalpoint(integer(request.params.n, "evalpoint"))),
  );
  app.get(
    "/img/:arm/:repeat/:task/draft/:draft/evalpoint/:n",
    image((request) =>
      path.join(
        agentFiles(cellOf(request).scores.dir).draftScores(integer(request.params.draft, "draft")),
        RESULT_FILES.evalpoints,
        `${integer(request.params.n, "evalpoint")}.png`,
      ),
    ),
  );
  app.get(
    "/img/:arm/:repeat/:task/video/:step",
    image(async (request) => {
      const cell = cellOf(request);
      const step = request.params.step === "initial" ? -1 : integer(request.params.step, "step");
      const selfCheck = readSelfCheck(cell.scores.dir, []);
      const aligned = alignedState(selfCheck, step);
      if (!aligned) return undefined;
      // The self-check's own frame when this machine has it, else the moment taken from the task's video.
      const framePath = selfCheck?.video?.states?.find((state) => state.index === aligned.state)?.framePath;
      if (framePath && fs.existsSync(framePath)) return framePath;
      const task = index.tasks.get(cell.record.taskId);
      if (!task || aligned.sec === undefined) return undefined;
      return images.videoFrame(task.inputs.videoPath, aligned.sec);
    }),
  );
  app.get("/file/:arm/:repeat/:task/trace.zip", (request, response, next) => {
    try {
      const cell = cellOf(request);
      const file = candidateFiles(cell.scores.dir).trace;
      if (!fs.existsSync(file)) throw new NotFound("this cell has no trace.zip");
      response.download(file, `trace-${cell.record.arm}-r${cell.record.repeat}-task${cell.record.taskId}.zip`, sendOptions());
    } catch (error) {
      next(error);
    }
  });

  app.use((_request: Request, response: Response) => {
    response.status(404).json({ error: "not found" });
  });
  app.use((error: unknown, _request: Request, response: Response, _next: NextFunction) => {
    // send's own errors carry their status (a file gone between the check and the send is a 404 too).
    const sendStatus = (error as { status?: unknown }).status;
    const status = error instanceof NotFound || (error as NodeJS.ErrnoException).code === "ENOENT" || sendStatus === 404 ? 404 : 500;
    if (status === 500) logger.warn(`iwr view: ${errorMessage(error)}`);
    if (response.headersSent) return;
    response.status(status).json({ error: errorMessage(error) });
  });
  return app;
}
