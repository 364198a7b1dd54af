/**
 * A real redis-server for the queue tests: the Debian package's binary (installed by
 * `iwr setup`), started on 127.0.0.1 on a free port with nothing saved to disk.
 */
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { afterAll, beforeAll } from "vitest";
import { findRedisServer } from "../../src/setup/find-tools.ts";

export interface RedisServer {
  url: string;
  port: number;
  /** Ends the server (SIGTERM by default; SIGKILL for a crash) and resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server on a free port, or on `port` (a Redis restarted where its clients look for it). */
export async function startRedisServer(port?: number): Promise<RedisServer> {
  const binary = findRedisServer();
  if (!binary)
    throw new Error("redis-server not found: run `node bin/iwr.js setup` (as root on Debian it installs the redis-server package) or set IWR_REDIS_SERVER");
  port ??= await freePort();
  const child: ChildProcess = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill(signal);
      }),
  };
}

/** Registers the hooks of a test file's own redis-server; the getter is valid inside tests. */
export function redisFixture(): () => RedisServer {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return () => {
    if (!redis) throw new Error("redisFixture: the server is not started yet (use it inside a test)");
    return redis;
  };
}
