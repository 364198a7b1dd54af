/**
 * Lines stay readable: no source line is longer than the formatter's width (biome.jsonc,
 * 160). The formatter breaks code; a long string or comment it cannot break must be split
 * by hand, and this says where.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const CHECKOUT = path.resolve(import.meta.dirname, "../..");
const WIDTH = 160;
const SOURCE_FOLDERS = ["src", "agents", "test", "bench", "scripts", "bin"];
const SKIPPED = new Set(["node_modules", "fixtures", ".tmp"]);

/** Our source files under a folder (TypeScript, CommonJS, the bin scripts), test fixtures left out. */
function sourceFilesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : sourceFilesUnder(file);
    return /\.(ts|cjs|js)$/.test(entry.name) ? [file] : [];
  });
}

describe("source lines", () => {
  it(`are at most ${WIDTH} characters long`, () => {
    const files = SOURCE_FOLDERS.flatMap((folder) => sourceFilesUnder(path.join(CHECKOUT, folder))).map((file) => path.relative(CHECKOUT, file));
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
