/**
 * The folder lock: a live holder on this host refuses a second taker, naming it; a holder
 * that is gone (its pid no longer runs) is taken over with a warning; another host's lock
 * refuses, naming both hosts; an unreadable lock refuses, naming the file; the lock is
 * gone after release and after its process exits without releasing it.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { IwrError } from "../../src/errors.ts";
import { lockFolder } from "../../src/files/folder-lock.ts";
import { outputFolderProblem } from "../../src/files/output-folder.ts";
import { captureWarnings, type WarningCapture } from "../support/warnings.ts";

let dir: string;
let warnings: WarningCapture;
const options = { name: "run.lock", command: "iwr run test.yaml", what: "run folder" };
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-folder-lock-"));
  warnings = captureWarnings();
});
afterAll(() => {
  warnings.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});
let sleeper: ReturnType<typeof spawn> | undefined;
afterEach(() => {
  sleeper?.kill("SIGKILL");
  sleeper = undefined;
});

const folder = (name: string) => path.join(dir, name);
const holderRecord = (pid: number, host = os.hostname()) =>
  JSON.stringify({ pid, host, startedAt: "2030-01-02T03:04:05.000Z", command: "iwr run other.yaml --queue" });
const refusalOf = (target: string): IwrError => {
  try {
    lockFolder(target, options);
  } catch (error) {
    return error as IwrError;
  }
  throw new Error("the lock was taken");
};

describe("the folder lock", () => {
  it("is taken, refuses a second taker while held, and is gone after release", () => {
    const target = folder("plain");
    const lock = lockFolder(target, options);
    const record = JSON.parse(fs.readFileSync(path.join(target, "run.lock"), "utf8"));
    expect(record).toMatchObject({ pid: process.pid, host: os.hostname(), command: "iwr run test.yaml" });
    expect(refusalOf(target)).toMatchObject({ code: "FOLDER_LOCKED", message: expect.stringContaining(`pid ${process.pid} on host ${os.hostname()}`) });
    lock.release();
    expect(fs.existsSync(path.join(target, "run.lock"))).toBe(false);
    lockFolder(target, options).release();
  });

  it("refuses while another live process on this host holds it, naming that process and its command", () => {
    sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
    const target = folder("live");
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, "run.lock"), holderRecord(sleeper.pid!));
    const error = refusalOf(target);
    expect(error.code).toBe("FOLDER_LOCKED");
    expect(error.message).toContain(`is in use by another run: pid ${sleeper.pid} on host ${os.hostname()}, started 2030-01-02T03:04:05.000Z`);
    expect(error.message).toContain("iwr run other.yaml --queue");
  });

  it("takes over the lock of a process that is gone, with a warning naming it", async () => {
    const gone = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid;
    const target = folder("stale");
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, "run.lock"), holderRecord(gone));
    const lock = lockFolder(target, options);
    expect(JSON.parse(fs.readFileSync(lock.file, "utf8")).pid).toBe(process.pid);
    expect((await warnings.messages()).some((message) => message.includes("taking over the lock") && message.includes(`pid ${gone} on host`))).toBe(true);
    lock.release();
  });

  it("refuses another host's lock, naming both hosts, however old", () => {
    const target = folder("foreign");
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, "run.lock"), holderRecord(1234, "another-machine"));
    const error = refusalOf(target);
    expect(error.message).toContain("in use by a run on another machine: pid 1234 on host another-machine");
    expect(error.message).toContain(`this is host ${os.hostname()}`);
    expect(error.message).toContain(`remove ${path.join(target, "run.lock")}`);
  });

  it("refuses an unreadable lock, naming the file", () => {
    const target = folder("garbled");
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, "run.lock"), "{ pid:");
    expect(refusalOf(target).message).toMatch(/is locked by .*run\.lock, which cannot be read: if no run is using the folder, remove that file/);
  });

  it("is removed when its process exits without releasing it", () => {
    const target = folder("exit");
    const module = path.resolve("src/files/folder-lock.ts");
    const script = `import("${module}").then(({ lockFolder }) => lockFolder(${JSON.stringify(target)}, ${JSON.stringify(options)}))`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "-e", script], { encoding: "utf8" });
    expect(child.status, child.stderr).toBe(0);
    expect(fs.existsSync(target)).toBe(true);
    expect(fs.existsSync(path.join(target, "run.lock"))).toBe(false);
  });
});

describe("output folders", () => {
  const checkout = path.resolve(".");
  it("refuses empty paths, files, the checkout and its source and data folders; accepts the rest", () => {
    expect(outputFolderProblem("", checkout)).toMatch(/it is empty/);
    expect(outputFolderProblem("  ", checkout)).toMatch(/it is empty/);
    expect(outputFolderProblem("package.json", checkout)).toMatch(/is a file, not a folder/);
    expect(outputFolderProblem(".", checkout)).toMatch(/is the checkout itself/);
    expect(outputFolderProblem(`${checkout}/`, checkout)).toMatch(/is the checkout itself/);
    for (const inside of ["src", "tasks/new-run", "agents/x/y", "prompts", "configs/runs"])
      expect(outputFolderProblem(inside, checkout), inside).toMatch(/is inside the project's \w+\/ folder/);
    for (const fine of ["runs/x", "results", "srcs", path.join(dir, "elsewhere"), "test/out"])
      expect(outputFolderProblem(fine, checkout), fine).toBeUndefined();
    // Through a link: a folder outside that points into src/ is still src/.
    fs.symlinkSync(path.join(checkout, "src"), path.join(dir, "link-to-src"));
    expect(outputFolderProblem(path.join(dir, "link-to-src", "runs"), checkout)).toMatch(/inside the project's src\/ folder/);
    // A long value is quoted in part.
    expect(outputFolderProblem(`${"x".repeat(5000)}/package.json`, checkout)).toBeUndefined();
    expect(outputFolderProblem(`src/${"y".repeat(5000)}`, checkout)!.length).toBeLessThan(400);
  });
});
