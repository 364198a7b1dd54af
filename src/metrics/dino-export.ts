/**
 * Which ONNX export of facebook/dinov2-base `iwr setup --dino` fetches, file by file, with
 * what each file must be. The hub could not be reached from the machines this was written
 * on, so every number below comes from public records, each named with its source:
 *
 * - the repository and revision: `onnx-community/dinov2-base`, the ONNX export of
 *   facebook/dinov2-base made for transformers.js; revision 31ef06c… is its `main` on the
 *   hub's listing ("[Automated] Update base model metadata"), the `onnx/` folder unchanged
 *   since its one upload (89031da);
 * - `onnx/model.onnx` (fp32): 346,627,111 bytes, sha256 320d1012…0cb0, as two independent
 *   public projects that downloaded it record them (one pins this revision in its code,
 *   with this size and hash; the other measured both after its download); the hub lists
 *   the file as 347 MB;
 * - `preprocessor_config.json`: 436 bytes on the hub's listing; its content is shown there
 *   (and is the same in Xenova/dinov2-base); written as transformers writes it (indent 2,
 *   sorted keys, a final newline) it is exactly 436 bytes with sha256 14e780d8…f828, the
 *   hash an independent public project records for the same file;
 * - `config.json`: 899 bytes on the hub's listing; no public record of its hash was found,
 *   so it is checked by its size and by the values that make it dinov2-base.
 *
 * A file with a recorded sha256 is verified by size and hash; one without, by size and its
 * JSON values; setup prints which check each file passed.
 */
import fs from "node:fs";
import { z } from "zod";
import { errorMessage, IwrError } from "../errors.ts";

const ModelFileSchema = z.strictObject({
  /** Path inside the repository, "/"-separated. */
  path: z
    .string()
    .min(1)
    .refine((file) => !file.split("/").some((part) => part === "" || part === "." || part === ".."), { message: "a relative path without . or .. parts" }),
  /** Exact size in bytes. */
  size: z.number().int().nonnegative(),
  /** sha256 of the whole file, hex; absent when no trustworthy record of it exists. */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /** For a JSON file without a recorded hash: values it must hold (top-level keys). */
  json: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});
export type ModelFile = z.infer<typeof ModelFileSchema>;

/** A model export on the hub: where it is, and every file with what it must be (also the format of `--dino-manifest`). */
export const ModelExportSchema = z.strictObject({
  repo: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: "owner/name" }),
  revision: z.string().regex(/^[0-9a-f]{40}$/, { message: "a full commit hash (40 hex digits)" }),
  files: z.array(ModelFileSchema).min(1),
});
export type ModelExport = z.infer<typeof ModelExportSchema>;

export const DINOV2_BASE_ONNX: ModelExport = Object.freeze({
  repo: "onnx-community/dinov2-base",
  revision: "31ef06cac16d5d301c5930d147002a058c85a5e4",
  files: [
    { path: "config.json", size: 899, json: { model_type: "dinov2", hidden_size: 768, patch_size: 14, num_hidden_layers: 12, num_attention_heads: 12 } },
    { path: "preprocessor_config.json", size: 436, sha256: "14e780d86fa1861f8751f868d7f45425b5feb55c38ca26f152ca5097ab30f828" },
    { path: "onnx/model.onnx", size: 346_627_111, sha256: "320d1012a6fc65b101fc85ca30ee7a47b2e4f6a2e8bd78fb9d7036def0e30cb0" },
  ],
});

/** A manifest file (`iwr setup --dino --dino-manifest <file>`): another export, or a mirror's copy at another revision. */
export function readModelExport(file: string): ModelExport {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `--dino-manifest ${file}: ${errorMessage(error)}`, { file });
  }
  const parsed = ModelExportSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IwrError("CONFIG_INVALID", `--dino-manifest ${file}: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`, { file });
  }
  return parsed.data;
}
