/**
 * `iwr` commands run as their own processes (coordinators, workers), with their output
 * collected line by line, for tests that kill, restart and watch them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";

export interface IwrProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr), a line each. */
  lines: string[];
  exited: Promise<number | null>;
}

export function startIwr(args: string[], env: NodeJS.ProcessEnv): IwrProcess {
  const child = spawn(process.execPath, ["bin/iwr.js", "--quiet", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean));
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  return { child, lines, exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))) };
}

export async function until(what: string, condition: () => boolean, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Files under `dir` (relative paths) whose names end with `suffix`. */
export function filesUnder(dir: string, suffix: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(suffix)) : [];
}
