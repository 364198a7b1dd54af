/**
 * The OCR engine's own stderr lines (Leptonica's "Error in pixReadStream: …", Tesseract's
 * "Warning: Invalid resolution …") are dropped by our worker script, so a run's output stays
 * clean (#13: "no stray library lines"), while the reads themselves behave as before. Each
 * case runs in its own process, the real engine on pictures that make it print them; the
 * `plain` case, tesseract.js's own worker script, shows those lines are real.
 */
import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";

const ENGINE_LINES = /Error in pixReadStream|Invalid resolution \d+ dpi|Image too small to scale|Line cannot be recognized/;

function runChild(mode: "plain" | "filtered" | "evaluator"): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "test/support/ocr-diagnostics-child.ts", mode],
      { timeout: 90_000, env: { ...process.env, IWR_LOG_LEVEL: "warn" } },
      (error, stdout, stderr) => (error ? reject(new Error(`${mode}: ${error.message}\n${stderr}`)) : resolve({ stdout, stderr })),
    );
  });
}

describe("the OCR engine's diagnostics", () => {
  it("are printed by tesseract.js's own worker, and dropped by ours with the reads unchanged", async () => {
    const plain = await runChild("plain");
    expect(plain.stderr).toMatch(/Error in pixReadStream/);
    expect(plain.stderr).toMatch(/Invalid resolution \d+ dpi/);
    expect(plain.stderr).toMatch(/Image too small to scale!! \(2x36 vs min width of 3\)/);
    expect(plain.stderr).toMatch(/Line cannot be recognized!!/);
    const filtered = await runChild("filtered");
    expect(filtered.stderr).not.toMatch(ENGINE_LINES);
    expect(filtered.stdout).toBe(plain.stdout);
    expect(filtered.stdout).toContain("not-an-image: rejected");
  }, 200_000);

  it("never reach the output through the evaluator's reader, and a picture it cannot read is an error", async () => {
    const evaluator = await runChild("evaluator");
    expect(evaluator.stderr).not.toMatch(ENGINE_LINES);
    expect(evaluator.stdout).toContain("not-an-image: rejected");
    expect(evaluator.stdout).toContain("blank: read");
  }, 120_000);
});
