import type { Command } from "commander";
import { ensureTools, setupSummary } from "../../setup/ensure-tools.ts";

interface SetupCliOptions {
  dino?: boolean;
  dinoManifest?: string;
}

export function registerSetupCommand(program: Command): void {
  program
    .command("setup")
    .description(
      "find Chromium, ffmpeg and redis-server (queue mode only); install them with apt-get when missing and running as root on Debian/Ubuntu; " +
        "say whether the visual metric will be DINO or its fallback",
    )
    .option(
      "--dino",
      "also fetch the ONNX export of facebook/dinov2-base (onnx-community/dinov2-base, about 347 MB) into .cache/transformers " +
        "(IWR_TRANSFORMERS_CACHE) and verify every file's size and sha256; from HF_ENDPOINT when set, else the Hugging Face hub",
    )
    .option("--dino-manifest <file>", "with --dino: fetch another export, described by a JSON file { repo, revision, files: [{ path, size, sha256 }] }")
    .action(async (options: SetupCliOptions) => {
      const report = ensureTools();
      console.error(setupSummary(report));
      const { IwrError } = await import("../../errors.ts");
      if (options.dinoManifest && !options.dino) throw new IwrError("CONFIG_INVALID", "--dino-manifest goes with --dino");
      // Not through dino.ts: saying which metric a run will use should not load transformers.js and its ONNX runtime.
      const { defaultTransformersDirs, exportDir, findDinoModel, transformersCacheDir } = await import("../../metrics/dino-location.ts");
      if (options.dino) {
        const [{ downloadModelExport }, { readModelExport }] = await Promise.all([
          import("../../metrics/dino-download.ts"),
          import("../../metrics/dino-export.ts"),
        ]);
        const model = options.dinoManifest ? readModelExport(options.dinoManifest) : undefined;
        const result = await downloadModelExport(model ? { model } : {});
        for (const file of result.files)
          console.error(
            `  ${file.path}: ${file.status}, ${file.bytes} bytes, ${file.check === "sha256" ? "size and sha256" : "size and JSON values"} verified`,
          );
        console.error(`setup: DINO model verified in ${result.modelDir}`);
        if (result.modelDir !== exportDir(transformersCacheDir())) console.error(`setup: use it with IWR_DINO_MODEL_DIR=${result.modelDir}`);
      }
      const dino = findDinoModel(process.env, defaultTransformersDirs());
      console.error(
        dino.found
          ? `setup: visual metric: DINO (facebook/dinov2-base from ${dino.modelDir})`
          : "setup: visual metric: the ssim-gray-256 fallback, not DINO (no model found; iwr setup --dino fetches it, about 347 MB)",
      );
    });
}
