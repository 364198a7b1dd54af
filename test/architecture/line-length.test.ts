/**
 * Lines stay readable: no source line is longer than the formatter's width (biome.jsonc,
 * 160). The formatter breaks code; a long string or comment it cannot break must be split
 * by hand, and this says where.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const CHECKOUT = path.resolve(import.meta.dirname, "../..");
const WIDTH = 160;

describe("source lines", () => {
  it(`are at most ${WIDTH} characters long`, () => {
    const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "*.ts", "*.cjs", "bin/*.js"], { cwd: CHECKOUT, encoding: "utf8" })
      .split("\n")
      .filter((file) => file && !file.startsWith("test/fixtures/") && fs.existsSync(path.join(CHECKOUT, file)));
    expect(files.length).toBeGreaterThan(100);
    const long = files.flatMap((file) =>
      fs
        .readFileSync(path.join(CHECKOUT, file), "utf8")
        .split("\n")
        .flatMap((line, index) => ([...line].length > WIDTH ? [`${file}:${index + 1} (${[...line].length})`] : [])),
    );
    expect(long).toEqual([]);
  });
});
