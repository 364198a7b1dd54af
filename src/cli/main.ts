/**
 * The `iwr` command line. Each command lives in its own module under
 * `commands/` and is registered in `commands/index.ts`.
 */
import { Command, CommanderError } from "commander";
import { configureLogger, type LogLevel } from "../log/logger.ts";
import { IwrError, errorMessage } from "../errors.ts";
import { registerCommands } from "./commands/index.ts";

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
    configureLogger({ level, file: options.logFile });
  });
  registerCommands(program);
  return program;
}

/** Runs the CLI and returns the exit code (never calls process.exit itself). */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version arrive here as "errors" with exit code 0.
      return error.exitCode;
    }
    const prefix = error instanceof IwrError ? `${error.code}: ` : "";
    console.error(`iwr: ${prefix}${errorMessage(error)}`);
    return 1;
  }
}
