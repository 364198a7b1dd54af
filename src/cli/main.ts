/**
 * The `iwr` command line. Each command lives in its own module under
 * `commands/` and is registered in `commands/index.ts`.
 */

import fs from "node:fs";
import path from "node:path";
import { Command, CommanderError } from "commander";
import { errorMessage, IwrError } from "../errors.ts";
import { configureLogger, type LogLevel } from "../log/logger.ts";
import { registerCommands } from "./commands/index.ts";
import { EXIT_CODES, exitCodeForError } from "./exit-codes.ts";

export interface GlobalOptions {
  verbose?: boolean;
  quiet?: boolean;
  logFile?: string;
}

export function buildProgram(): Command {
  const program = new Command("iwr")
    .description("Interactive web page reconstruction from video: generate, evaluate and report IWR-Bench-style experiments")
    .option("-v, --verbose", "log debug detail to the console")
    .option("-q, --quiet", "log only warnings and errors to the console")
    .option("--log-file <path>", "also write a JSON-lines log of this run")
    .showHelpAfterError()
    .exitOverride();
  program.hook("preAction", (thisCommand) => {
    const options = thisCommand.opts<GlobalOptions>();
    const level: LogLevel = options.verbose ? "debug" : options.quiet ? "warn" : "info";
    if (options.logFile !== undefined) checkLogFile(options.logFile);
    configureLogger({ level, file: options.logFile });
  });
  registerCommands(program);
  return program;
}

/** A log file the run can write, or a usage error naming the flag. */
function checkLogFile(file: string): void {
  const problem =
    file.trim() === ""
      ? "expected a file path, got an empty one"
      : fs.existsSync(file) && fs.statSync(file).isDirectory()
        ? `${file} is a folder; give a file path such as ${file.replace(/\/+$/, "")}/run.jsonl`
        : undefined;
  if (problem) throw new IwrError("CONFIG_INVALID", `--log-file: ${problem}`);
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    fs.closeSync(fs.openSync(file, "a"));
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `--log-file: cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}`);
  }
}

/** Runs the CLI and returns the exit code (never calls process.exit itself; see exit-codes.ts). */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version arrive here as "errors" with exit code 0; the rest are usage errors.
      return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    }
    const prefix = error instanceof IwrError ? `${error.code}: ` : "";
    console.error(`iwr: ${prefix}${errorMessage(error)}`);
    return exitCodeForError(error);
  }
}
