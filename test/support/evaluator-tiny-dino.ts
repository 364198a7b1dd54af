/**
 * A tiny stand-in for facebook/dinov2-base, built with onnx-proto and saved in the
 * layout our loader (and transformers.js) reads: config.json, preprocessor_config.json,
 * onnx/model.onnx. Same input and output names and ranks as the real export:
 *   pixel_values [B, 3, 224, 224] → AveragePool 32×32 → Reshape [B, 1, 147] → MatMul W [147, 8]
 *   = CLS [B, 1, 8]; a second token = −CLS; Concat → last_hidden_state [B, 2, 8].
 * The second token makes any reader that takes the wrong position (or a mean over
 * tokens) give a different answer from one that takes position 0.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import onnxProto from "onnx-proto";

const { onnx } = onnxProto;

export const TINY_DINO_DIM = 8;
export const TINY_DINO_POOL = 32;
const POOLED = 224 / TINY_DINO_POOL;
export const TINY_DINO_FEATURES = 3 * POOLED * POOLED;

/** The projection's weights, row-major [features, dim]; deterministic. */
export function tinyDinoWeights(): Float32Array {
  return new Float32Array(TINY_DINO_FEATURES * TINY_DINO_DIM).map((_, i) => Math.sin(i * 12.9898 + 1) * 0.5);
}

/** What the tiny model's CLS token is for given pixel_values (CHW), computed in plain JS. */
export function tinyDinoExpectedCls(pixels: Float32Array): Float32Array {
  const pooled = new Float32Array(TINY_DINO_FEATURES);
  for (let c = 0; c < 3; c += 1) {
    for (let py = 0; py < POOLED; py += 1) {
      for (let px = 0; px < POOLED; px += 1) {
        let sum = 0;
        for (let y = 0; y < TINY_DINO_POOL; y += 1) {
          for (let x = 0; x < TINY_DINO_POOL; x += 1) sum += pixels[c * 224 * 224 + (py * TINY_DINO_POOL + y) * 224 + px * TINY_DINO_POOL + x] ?? 0;
        }
        pooled[c * POOLED * POOLED + py * POOLED + px] = sum / (TINY_DINO_POOL * TINY_DINO_POOL);
      }
    }
  }
  const weights = tinyDinoWeights();
  const cls = new Float32Array(TINY_DINO_DIM);
  for (let d = 0; d < TINY_DINO_DIM; d += 1) {
    let sum = 0;
    for (let f = 0; f < TINY_DINO_FEATURES; f += 1) sum += (pooled[f] ?? 0) * (weights[f * TINY_DINO_DIM + d] ?? 0);
    cls[d] = sum;
  }
  return cls;
}

function tinyDinoModelBytes(): Uint8Array {
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const ints = onnx.AttributeProto.AttributeType.INTS;
  const weights = tinyDinoWeights();
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 13 }],
    producerName: "iwr-test",
    graph: {
      name: "tiny-dinov2",
      input: [
        {
          name: "pixel_values",
          type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: "batch" }, { dimValue: 3 }, { dimValue: 224 }, { dimValue: 224 }] } } },
        },
      ],
      output: [
        {
          name: "last_hidden_state",
          type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: "batch" }, { dimValue: 2 }, { dimValue: TINY_DINO_DIM }] } } },
        },
      ],
      initializer: [
        { name: "W", dataType: FLOAT, dims: [TINY_DINO_FEATURES, TINY_DINO_DIM], rawData: new Uint8Array(weights.buffer) },
        { name: "flat_shape", dataType: onnx.TensorProto.DataType.INT64, dims: [3], int64Data: [0, 1, TINY_DINO_FEATURES] },
      ],
      node: [
        {
          opType: "AveragePool",
          input: ["pixel_values"],
          output: ["pooled"],
          attribute: [
            { name: "kernel_shape", type: ints, ints: [TINY_DINO_POOL, TINY_DINO_POOL] },
            { name: "strides", type: ints, ints: [TINY_DINO_POOL, TINY_DINO_POOL] },
          ],
        },
        { opType: "Reshape", input: ["pooled", "flat_shape"], output: ["flat"] },
        { opType: "MatMul", input: ["flat", "W"], output: ["cls"] },
        { opType: "Neg", input: ["cls"], output: ["other"] },
        {
          opType: "Concat",
          input: ["cls", "other"],
          output: ["last_hidden_state"],
          attribute: [{ name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
        },
      ],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Writes the stand-in model folder under os.tmpdir(); the caller removes it. */
export function writeTinyDinoModel(preprocessorConfig: Record<string, unknown> = DINOV2_PREPROCESSOR_CONFIG): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-tiny-dino-"));
  fs.mkdirSync(path.join(dir, "onnx"));
  fs.writeFileSync(path.join(dir, "onnx", "model.onnx"), tinyDinoModelBytes());
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ model_type: "dinov2", architectures: ["Dinov2Model"], hidden_size: TINY_DINO_DIM }));
  fs.writeFileSync(path.join(dir, "preprocessor_config.json"), JSON.stringify(preprocessorConfig));
  return dir;
}

/** facebook/dinov2-base's preprocessor_config.json values. */
export const DINOV2_PREPROCESSOR_CONFIG = {
  crop_size: { height: 224, width: 224 },
  do_center_crop: true,
  do_convert_rgb: true,
  do_normalize: true,
  do_rescale: true,
  do_resize: true,
  image_mean: [0.485, 0.456, 0.406],
  image_processor_type: "BitImageProcessor",
  image_std: [0.229, 0.224, 0.225],
  resample: 3,
  rescale_factor: 0.00392156862745098,
  size: { shortest_edge: 256 },
};
