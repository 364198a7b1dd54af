/**
 * `iwr` commands run as their own processes (coordinators, workers), with their output
 * collected line by line, for tests that kill, restart and watch them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

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

/**
 * Files under `dir` (relative paths) whose names end with `suffix`. The processes watched
 * make and remove folders while this walks (a served page's temp folder): one that is
 * gone by the time it is read is skipped, where Node's recursive readdir would throw.
 */
export function filesUnder(dir: string, suffix: string, under = ""): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(path.join(dir, under), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return entries.flatMap((entry) => {
    const name = path.join(under, entry.name);
    if (entry.isDirectory()) return filesUnder(dir, suffix, name);
    return name.endsWith(suffix) ? [name] : [];
  });
}
