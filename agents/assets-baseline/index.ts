import type { TaskInputs } from "../../src/tasks/inputs.ts";
import type { GeneratorContext } from "../module-contract.ts";

const IMAGE = /\.(png|jpe?g|gif|webp|svg|avif)$/i;

export async function generate(inputs: TaskInputs, context: GeneratorContext): Promise<string> {
  const images = inputs.assetFiles.filter((file) => IMAGE.test(file));
  context.log(`${images.length} image asset(s)`);
  const tiles = images.map((file) => `  <img src="${context.assetsBase}/${encodeURI(file)}" alt="">`).join("\n");
  return (
    `<!doctype html>
<html><head><meta charset="utf-8"><title>assets baseline</title>
<style>body{margin:0;width:${inputs.resolution.width}px;min-height:${inputs.resolution.height}px;display:flex;flex-wrap:wrap;gap:16px;` +
    `align-content:flex-start;padding:16px;box-sizing:border-box;font-family:sans-serif}img{max-width:45%;max-height:40vh}</style>
</head><body>
${tiles}
</body></html>
`
  );
}
