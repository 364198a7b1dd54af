/**
 * Running `iwr` in the test process, its console and stream output captured instead of
 * printed (restore with vi.restoreAllMocks in afterEach).
 */
import { vi } from "vitest";
import { main } from "../../src/cli/main.ts";

export interface CaptureOptions {
  /** Pass --quiet (default true). */
  quiet?: boolean;
  /** Capture stdout as well as stderr and the console (default true). */
  stdout?: boolean;
}

export function runIwrCapturing(output: string[], args: readonly string[], options: CaptureOptions = {}): Promise<number> {
  const capture = (...parts: unknown[]) => void output.push(parts.map(String).join(" "));
  vi.spyOn(console, "error").mockImplementation(capture);
  vi.spyOn(console, "log").mockImplementation(capture);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => output.push(String(chunk)) > 0);
  if (options.stdout ?? true) vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => output.push(String(chunk)) > 0);
  return main(["node", "iwr", ...((options.quiet ?? true) ? ["--quiet"] : []), ...args]);
}
