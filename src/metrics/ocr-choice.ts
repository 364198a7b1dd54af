/**
 * Which OCR engine a process runs (ocr.ts starts it): the settings' (`auto`: native when
 * installed and working, else tesseract.js), or the one IWR_OCR_ENGINE names (`tesseract`,
 * `tesseract.js` or `auto`). Kept apart from the engines themselves so that a run's record
 * can name the engine without loading one.
 */
import { createRequire } from "node:module";
import { IwrError } from "../errors.ts";
import { findTesseract, nativeTesseractVersion } from "../setup/find-tools.ts";
import { METRIC_SETTINGS } from "./settings.ts";

const require = createRequire(import.meta.url);

/** The builds of Tesseract the OCR metric can run (ocr-engines.ts): native, and WebAssembly. */
export const OCR_ENGINE_NAMES = ["tesseract", "tesseract.js"] as const;
export type OcrEngineName = (typeof OCR_ENGINE_NAMES)[number];

/** Which engine to run, from IWR_OCR_ENGINE (`tesseract`, `tesseract.js` or `auto`), else the settings' choice. */
export function ocrEngineChoice(env: NodeJS.ProcessEnv = process.env): OcrEngineName | "auto" {
  const asked = env.IWR_OCR_ENGINE?.trim() || METRIC_SETTINGS.ocr.engine;
  if (asked === "auto" || (OCR_ENGINE_NAMES as readonly string[]).includes(asked)) return asked as OcrEngineName | "auto";
  throw new IwrError("CONFIG_INVALID", `IWR_OCR_ENGINE: expected one of auto, ${OCR_ENGINE_NAMES.join(", ")}, got '${asked}'`);
}

/**
 * The engine this process runs and, for the native one, its program: `auto` (the default)
 * takes the native build when it is installed and runs (findTesseract: IWR_TESSERACT or
 * PATH, a program that answers `--version` as Tesseract), else tesseract.js; a named one is
 * that one (a native one asked for and missing or broken is an error, never a silent
 * fallback).
 */
export function resolveOcrEngine(env: NodeJS.ProcessEnv = process.env): { name: OcrEngineName; executable?: string } {
  const choice = ocrEngineChoice(env);
  if (choice === "tesseract.js") return { name: "tesseract.js" };
  const executable = findTesseract(env);
  if (executable) return { name: "tesseract", executable };
  if (choice === "tesseract") {
    throw new IwrError(
      "SETUP_MISSING",
      "IWR_OCR_ENGINE=tesseract: the tesseract program was not found, or does not answer --version (run `iwr setup`, or set IWR_TESSERACT)",
    );
  }
  return { name: "tesseract.js" };
}

/** The engine this process would run, with its version, e.g. "tesseract 5.3.0" or "tesseract.js 7.0.0" (nothing is started). */
export function ocrEngineLabel(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = resolveOcrEngine(env);
  if (chosen.executable) return `tesseract ${nativeTesseractVersion(chosen.executable)?.tesseract ?? "unknown"}`;
  return `tesseract.js ${(require("tesseract.js/package.json") as { version: string }).version}`;
}
