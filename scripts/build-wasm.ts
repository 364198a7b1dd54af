/**
 * `npm run build:wasm`: compiles the WebAssembly text kernels under src/ (today
 * src/media/yuv-to-rgb.wat) into the .wasm files beside them, which are committed so that
 * running the project needs no compiler. A test compiles them again and fails if a
 * committed .wasm no longer matches its source.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseScriptArgs } from "./cli-args.ts";

/** The kernels, as paths from the repository's root. */
export const WASM_SOURCES = ["src/media/yuv-to-rgb.wat"];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The binary `source` (a path from the repository's root) compiles to. */
export async function compileWat(source: string): Promise<Uint8Array> {
  const { default: initWabt } = await import("wabt");
  const wabt = await initWabt();
  const parsed = wabt.parseWat(path.basename(source), fs.readFileSync(path.join(root, source), "utf8"), { simd: true });
  try {
    parsed.validate();
    return parsed.toBinary({}).buffer;
  } finally {
    parsed.destroy();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  parseScriptArgs({
    name: "build:wasm",
    command: "npm run build:wasm",
    summary: "Compiles the WebAssembly text kernels under src/ into the .wasm files beside them. Takes no options.",
    options: {},
  });
  for (const source of WASM_SOURCES) {
    const binary = await compileWat(source);
    const target = path.join(root, source.replace(/\.wat$/, ".wasm"));
    fs.writeFileSync(target, binary);
    console.log(`${source} -> ${path.relative(root, target)} (${binary.length} bytes)`);
  }
}
