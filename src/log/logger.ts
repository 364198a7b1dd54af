import fs from "node:fs";
import path from "node:path";
import winston from "winston";
import { redact, redactString } from "./redact.ts";

export type LogLevel = "error" | "warn" | "info" | "debug";

export interface LoggerOptions {
  /** Console level; `--verbose` → debug, `--quiet` → warn. */
  level?: LogLevel;
  /** A JSON-lines log file for this run (every level down to debug). */
  file?: string;
  /** Silence the console entirely (tests). */
  silentConsole?: boolean;
}

/** Masks secrets in the message and in every metadata field before any transport sees them. */
const redactFormat = winston.format((info) => {
  const masked = redact({ ...info });
  Object.assign(info, masked);
  if (typeof info.message === "string") info.message = redactString(info.message);
  return info;
});

const consoleFormat = winston.format.printf((info) => {
  const { level, message, timestamp: _ts, scope, ...meta } = info;
  const prefix = scope ? `[${String(scope)}] ` : "";
  const extras = Object.keys(meta).length > 0 ? ` ${JSON.stringify(meta)}` : "";
  return `${level}: ${prefix}${String(message)}${extras}`;
});

function loggerSettings(options: LoggerOptions): winston.LoggerOptions {
  const transports: winston.transport[] = [
    new winston.transports.Console({
      level: options.level ?? "info",
      silent: options.silentConsole ?? false,
      stderrLevels: ["error", "warn", "info", "debug"],
      format: winston.format.combine(winston.format.colorize(), consoleFormat),
    }),
  ];
  if (options.file) {
    fs.mkdirSync(path.dirname(options.file), { recursive: true });
    transports.push(
      new winston.transports.File({
        filename: options.file,
        level: "debug",
        format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
      }),
    );
  }
  return {
    level: "debug",
    // splat() first: it copies the caller's original metadata objects back onto the
    // record, so running it after redaction would undo the masking.
    format: winston.format.combine(winston.format.splat(), redactFormat()),
    transports,
  };
}

export function createLogger(options: LoggerOptions = {}): winston.Logger {
  return winston.createLogger(loggerSettings(options));
}

const root: winston.Logger = createLogger({ level: "info" });

/**
 * Reconfigure the process-wide logger in place (the CLI does this once from its
 * flags). In place, so child loggers that modules created at import time follow.
 */
export function configureLogger(options: LoggerOptions): winston.Logger {
  root.configure(loggerSettings(options));
  return root;
}

/** A child logger tagged with the room it logs from, e.g. `log("browser")`. */
export function log(scope: string): winston.Logger {
  return root.child({ scope });
}
