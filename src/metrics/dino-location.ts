/**
 * Where the DINO model folder is, or why there is none; never downloads anything. Kept
 * apart from the model's loading (dino.ts) so `iwr setup` can say which visual metric a
 * run will use without loading transformers.js and its ONNX runtime.
 *
 * The folder, in this order: `IWR_DINO_MODEL_DIR`; the export `iwr setup --dino` fetched
 * (`<IWR_TRANSFORMERS_CACHE or .cache/transformers>/onnx-community/dinov2-base`,
 * dino-download.ts); `<transformers.js cache>/facebook/dinov2-base`;
 * `<transformers.js localModelPath>/facebook/dinov2-base`.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DINOV2_BASE_ONNX, type ModelExport } from "./dino-export.ts";
import { METRIC_SETTINGS } from "./settings.ts";

export type DinoLocation = { found: true; modelDir: string } | { found: false; reason: string };

/** transformers.js's own folders (its `env.cacheDir` and `env.localModelPath`). */
export interface TransformersDirs {
  cacheDir: string | null;
  localModelPath: string;
}

/**
 * transformers.js's defaults, derived as its env.js derives them when it runs on Node:
 * `.cache/` and `models/` in its package folder (the folder above its dist/ bundle).
 */
export function defaultTransformersDirs(): TransformersDirs {
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.resolve("@huggingface/transformers"))));
  return { cacheDir: path.join(root, "/.cache/"), localModelPath: path.join(root, "/models/") };
}

/** The transformers.js cache folder `iwr setup --dino` fills: `IWR_TRANSFORMERS_CACHE`, else `.cache/transformers` (git-ignored). */
export function transformersCacheDir(environment: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(environment.IWR_TRANSFORMERS_CACHE || path.join(".cache", "transformers"));
}

/** An export's folder in a cache, as the hub and transformers.js's file cache lay it out: `<cache>/<owner>/<name>`. */
export function exportDir(cacheRoot: string, model: ModelExport = DINOV2_BASE_ONNX): string {
  return path.join(cacheRoot, ...model.repo.split("/"));
}

function hasModelFiles(dir: string): boolean {
  return fs.existsSync(path.join(dir, "config.json")) && fs.existsSync(path.join(dir, METRIC_SETTINGS.dino.onnxFile));
}

export function findDinoModel(environment: NodeJS.ProcessEnv, dirs: TransformersDirs): DinoLocation {
  const settings = METRIC_SETTINGS.dino;
  const explicit = environment[settings.modelDirEnv];
  if (explicit) {
    if (hasModelFiles(explicit)) return { found: true, modelDir: path.resolve(explicit) };
    return { found: false, reason: `${settings.modelDirEnv}=${explicit} does not hold config.json and ${settings.onnxFile}` };
  }
  const transformersRoots = [dirs.cacheDir, dirs.localModelPath].filter((root): root is string => typeof root === "string" && root.length > 0);
  const candidates = [exportDir(transformersCacheDir(environment)), ...transformersRoots.map((root) => path.join(root, settings.modelId))];
  const hit = candidates.find(hasModelFiles);
  if (hit) return { found: true, modelDir: path.resolve(hit) };
  return {
    found: false,
    reason:
      `no ${settings.modelId} ONNX model: run iwr setup --dino, or set ${settings.modelDirEnv} to a folder with config.json and ${settings.onnxFile} ` +
      `(looked in ${candidates.join(", ")})`,
  };
}
