/**
 * What `iwr setup` asks of apt-get when a tool is missing, seen through a stand-in apt-get
 * placed first on PATH (the real one is never run): the patience a fresh machine needs
 * (a dropped download retried, a busy dpkg waited for, a failed `update` tried again), and a
 * wanted package whose install fails said as a note without failing the setup.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type AptPatience, ensureTools, isDebianLike, missingFontPackages } from "../../src/setup/ensure-tools.ts";
import { findChromium, findFfmpeg } from "../../src/setup/find-tools.ts";

const work = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-setup-install-"));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/**
 * Setup installs only as root on Debian or Ubuntu. With Chromium, the system ffmpeg or a
 * font package missing it would ask the stand-in for them too, as packages it needs.
 */
const installs =
  process.getuid?.() === 0 && isDebianLike() && Boolean(findChromium()) && findFfmpeg()?.source === "system" && missingFontPackages().length === 0;

/**
 * Runs setup with `script` as apt-get, first on PATH, each call's arguments written as a line
 * to the calls file, and native Tesseract pointed at no file (it is only wanted, so setup
 * tries to install it). Returns what setup said, what apt-get wrote to stderr (passed through,
 * caught here), and the calls, the stand-in's own notes left out.
 */
function setupWithStandIn(name: string, script: (callsFile: string) => string, patience: AptPatience): { said: string[]; aptErrors: string; calls: string[] } {
  const callsFile = path.join(work, `${name}.calls`);
  const bin = path.join(work, name);
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, "apt-get"), `#!/bin/sh\necho "$*" >> '${callsFile}'\n${script(callsFile)}`);
  fs.chmodSync(path.join(bin, "apt-get"), 0o755);
  const saved = { PATH: process.env.PATH, IWR_TESSERACT: process.env.IWR_TESSERACT };
  process.env.PATH = `${bin}${path.delimiter}${process.env.PATH}`;
  process.env.IWR_TESSERACT = path.join(work, "no-such-tesseract");
  const said: string[] = [];
  let aptErrors = "";
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    aptErrors += String(chunk);
    return true;
  });
  try {
    // The stand-in must be what runs (a temporary folder mounted noexec would hand the call
    // to the real apt-get): asked for its version, the real one would print and record nothing.
    spawnSync("apt-get", ["--version"], { stdio: "ignore" });
    expect(fs.existsSync(callsFile) && fs.readFileSync(callsFile, "utf8").includes("--version"), "the stand-in apt-get ran").toBe(true);
    const report = ensureTools((line) => said.push(line), patience);
    expect(report.tesseract).toBeUndefined();
    expect(report.chromium.path).toBeTruthy();
  } finally {
    stderr.mockRestore();
    process.env.PATH = saved.PATH;
    if (saved.IWR_TESSERACT === undefined) delete process.env.IWR_TESSERACT;
    else process.env.IWR_TESSERACT = saved.IWR_TESSERACT;
  }
  const calls = fs
    .readFileSync(callsFile, "utf8")
    .trim()
    .split("\n")
    .filter((line) => !line.startsWith("stand-in:") && line !== "--version");
  return { said, aptErrors, calls };
}

const isUpdate = (call: string) => /(^| )update( |$)/.test(call);

describe.runIf(installs)("iwr setup installing a missing tool", () => {
  it("retries dropped downloads, waits for a busy dpkg, tries an update that found apt locked again, and says a failed wanted install without failing", () => {
    const updatedOnce = path.join(work, "updated-once");
    // The first update finds the lists locked (as while a first-boot update runs), and every install of tesseract-ocr fails.
    const script = (callsFile: string) => `case " $* " in
  *" update "*) if [ ! -e '${updatedOnce}' ]; then
    touch '${updatedOnce}'
    echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
    exit 100
  fi;;
  *" install "*tesseract-ocr*) echo "stand-in: unable to locate package" >> '${callsFile}'; exit 100;;
esac
exit 0
`;
    const started = Date.now();
    const { said, aptErrors, calls } = setupWithStandIn("locked-once", script, { updateRetries: 2, updatePauseMs: 200 });
    expect(aptErrors).toContain("E: Could not get lock /var/lib/apt/lists/lock");
    // The update that found the lock held was tried again after the pause, and only then were packages installed.
    expect(calls.filter(isUpdate)).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(said).toContainEqual(expect.stringMatching(/^apt-get update found apt locked by another process; trying again in 0.2 s \(1 of 2\)$/));
    const lastUpdate = calls.findLastIndex(isUpdate);
    const tesseractInstall = calls.findIndex((call) => /(^| )install .*tesseract-ocr/.test(call));
    expect(lastUpdate).toBe(1);
    expect(tesseractInstall).toBeGreaterThan(lastUpdate);
    for (const call of calls) {
      expect(call).toMatch(/-o Acquire::Retries=[1-9]/);
      expect(call).toMatch(/-o DPkg::Lock::Timeout=[1-9]/);
    }
    expect(said.some((line) => line.startsWith("note: apt-get install tesseract-ocr failed (exit 100)"))).toBe(true);
    expect(said.some((line) => line.startsWith("note: native Tesseract not found"))).toBe(true);
  });

  it("stops after the last retry of an update that keeps finding apt locked, naming how often it was tried and the command to run", () => {
    const locked = () => `echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2\nexit 100\n`;
    // Only wanted packages are missing: a failed update is a note, and setup goes on.
    const { said, calls } = setupWithStandIn("always-locked", locked, { updateRetries: 2, updatePauseMs: 50 });
    expect(calls.filter(isUpdate)).toHaveLength(3);
    expect(said).toContainEqual(expect.stringMatching(/^note: apt-get update failed 3 times \(exit 100\); run: sudo apt-get update && /));
  });

  it("says an update that failed for another reason at once, without waiting", () => {
    const broken = () => `echo "E: The repository 'http://deb.example.org stable Release' does not have a Release file." >&2\nexit 100\n`;
    const started = Date.now();
    const { said, calls } = setupWithStandIn("broken-source", broken, { updateRetries: 2, updatePauseMs: 5_000 });
    expect(calls.filter(isUpdate)).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(said).toContainEqual(expect.stringMatching(/^note: apt-get update failed \(exit 100\); run: /));
  });
});
