/**
 * §3.5 DINO: cosine similarity of the CLS token (last_hidden_state[:, 0, :]) of
 * facebook/dinov2-base for two images, clipped to [0, 1].
 *
 * The model is an ONNX export in a local folder (config.json, preprocessor_config.json,
 * onnx/model.onnx — the layout of the hub's ONNX exports), loaded by transformers.js
 * with remote downloads switched off, once per process per folder. Preprocessing is
 * ours (dino-preprocess.ts). Where the folder is: dino-location.ts.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { AutoModel, env, type PreTrainedModel, Tensor } from "@huggingface/transformers";
import { errorMessage, IwrError } from "../errors.ts";
import { type DinoLocation, findDinoModel } from "./dino-location.ts";
import { type DinoPreprocessing, preprocessForDino, readDinoPreprocessing } from "./dino-preprocess.ts";
import { METRIC_SETTINGS } from "./settings.ts";

export interface DinoModel {
  /** The folder the model was loaded from. */
  readonly modelDir: string;
  readonly preprocessing: DinoPreprocessing;
  /** What decides an embedding: the model's files (config, weights' size and time) and the preprocessing. */
  readonly identity: string;
  /** The CLS embedding of an image (computed each time: visual.ts keeps them, one per image content). */
  embed(image: Buffer): Promise<Float32Array>;
}

/** Where the DINO model folder is (dino-location.ts), with transformers.js's folders as this process has them. */
export function locateDinoModel(environment: NodeJS.ProcessEnv = process.env): DinoLocation {
  return findDinoModel(environment, { cacheDir: env.cacheDir, localModelPath: env.localModelPath });
}

function l2(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}

/** Cosine similarity clipped to [0, 1]. A zero-length vector gives 0 (numpy would give nan). */
export function clippedCosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new IwrError("EVALUATOR", `DINO embeddings differ in length (${a.length} vs ${b.length})`);
  let dot = 0;
  for (let i = 0; i < a.length; i += 1) dot += (a[i] ?? 0) * (b[i] ?? 0);
  const norms = l2(a) * l2(b);
  if (norms === 0 || !Number.isFinite(norms)) return 0;
  return Math.max(0, Math.min(1, dot / norms));
}

async function loadModel(modelDir: string): Promise<DinoModel> {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  const preprocessing = readDinoPreprocessing(modelDir);
  let model: PreTrainedModel;
  try {
    model = await AutoModel.from_pretrained(modelDir, { dtype: "fp32", device: "cpu", local_files_only: true });
  } catch (error) {
    throw new IwrError("SETUP_MISSING", `DINO model in ${modelDir} could not be loaded: ${errorMessage(error)}`, { modelDir }, { cause: error });
  }
  const shape = [1, 3, preprocessing.cropHeight, preprocessing.cropWidth];
  const embed = async (image: Buffer): Promise<Float32Array> => {
    const pixels = await preprocessForDino(image, preprocessing);
    const outputs: unknown = await model({ pixel_values: new Tensor("float32", pixels, shape) });
    const hidden = outputs && typeof outputs === "object" && "last_hidden_state" in outputs ? outputs.last_hidden_state : undefined;
    if (!(hidden instanceof Tensor) || hidden.dims.length !== 3 || !(hidden.data instanceof Float32Array)) {
      throw new IwrError("EVALUATOR", `DINO model in ${modelDir} did not return a float32 last_hidden_state [1, N, D]`);
    }
    const width = hidden.dims[2] ?? 0;
    // Position 0 of the sequence is the CLS token.
    return hidden.data.slice(0, width);
  };
  return { modelDir, preprocessing, identity: modelIdentity(modelDir, preprocessing), embed };
}

/** The model's files as they decide its output: config.json's content, the weights' size and time, the preprocessing. */
function modelIdentity(modelDir: string, preprocessing: DinoPreprocessing): string {
  const weights = fs.statSync(path.join(modelDir, METRIC_SETTINGS.dino.onnxFile));
  const config = createHash("sha256")
    .update(fs.readFileSync(path.join(modelDir, "config.json")))
    .digest("hex")
    .slice(0, 16);
  return (
    `${METRIC_SETTINGS.dino.modelId} config ${config} weights ${weights.size}@${Math.round(weights.mtimeMs)} ` +
    `preprocessing ${JSON.stringify(preprocessing)}`
  );
}

const loaded = new Map<string, Promise<DinoModel>>();

/** The DINO model of a folder, loaded once per process (a failed load is retried on the next call). */
export function loadDinoModel(modelDir: string): Promise<DinoModel> {
  const key = path.resolve(modelDir);
  let model = loaded.get(key);
  if (!model) {
    model = loadModel(key);
    loaded.set(key, model);
    model.catch(() => loaded.delete(key));
  }
  return model;
}

/** Drops loaded models (their ONNX sessions are released with them). */
export function unloadDinoModels(): void {
  loaded.clear();
}
