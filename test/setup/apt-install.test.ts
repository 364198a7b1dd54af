/**
 * What `iwr setup` asks of apt-get when a tool is missing, seen through a stand-in apt-get
 * placed first on PATH (the real one is never run): the patience a fresh machine needs, and a
 * wanted package whose install fails said as a note without failing the setup.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureTools } from "../../src/setup/ensure-tools.ts";

const work = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-setup-install-"));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Setup installs only as root on Debian or Ubuntu; elsewhere it prints the command instead. */
const installs = process.getuid?.() === 0 && /^(ID|ID_LIKE)=.*\b(debian|ubuntu)\b/m.test(fs.readFileSync("/etc/os-release", "utf8"));

/** An apt-get that writes each call's arguments as a line, and fails every install. */
function standInAptGet(callsFile: string): string {
  const bin = path.join(work, "bin");
  fs.mkdirSync(bin, { recursive: true });
  const script = path.join(bin, "apt-get");
  fs.writeFileSync(
    script,
    `#!/bin/sh\necho "$*" >> '${callsFile}'\ncase " $* " in *" install "*) echo "E: Unable to locate package" >&2; exit 100;; esac\nexit 0\n`,
  );
  fs.chmodSync(script, 0o755);
  return bin;
}

describe.runIf(installs)("iwr setup installing a missing tool", () => {
  it("retries dropped downloads, waits for a busy package manager, and says a failed wanted install without failing", () => {
    const callsFile = path.join(work, "calls.txt");
    const saved = { PATH: process.env.PATH, IWR_TESSERACT: process.env.IWR_TESSERACT };
    process.env.PATH = `${standInAptGet(callsFile)}${path.delimiter}${process.env.PATH}`;
    // Native Tesseract is only wanted: pointing at no file makes setup try to install it.
    process.env.IWR_TESSERACT = path.join(work, "no-such-tesseract");
    const said: string[] = [];
    try {
      const report = ensureTools((line) => said.push(line));
      expect(report.tesseract).toBeUndefined();
      expect(report.chromium.path).toBeTruthy();
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.IWR_TESSERACT === undefined) delete process.env.IWR_TESSERACT;
      else process.env.IWR_TESSERACT = saved.IWR_TESSERACT;
    }

    const calls = fs.readFileSync(callsFile, "utf8").trim().split("\n");
    expect(calls.some((call) => /(^| )update( |$)/.test(call))).toBe(true);
    expect(calls.some((call) => /(^| )install .*tesseract-ocr/.test(call))).toBe(true);
    for (const call of calls) {
      expect(call).toMatch(/-o Acquire::Retries=[1-9]/);
      expect(call).toMatch(/-o DPkg::Lock::Timeout=[1-9]/);
    }
    expect(said.some((line) => line.startsWith("note: apt-get install tesseract-ocr failed (exit 100)"))).toBe(true);
    expect(said.some((line) => line.startsWith("note: native Tesseract not found"))).toBe(true);
  });
});
