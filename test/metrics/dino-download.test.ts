/**
 * `iwr setup --dino` against a local stand-in for the model hub on 127.0.0.1 (never the
 * real hub): a hub-shaped tree (`/<owner>/<name>/resolve/<revision>/<file>`, the ONNX file
 * behind a redirect as the hub's large files are) serving a tiny ONNX model built by the
 * test in dinov2's layout. The files land in the transformers.js cache layout, verify,
 * load through transformers.js, and `iwr setup` then names DINO; a corrupted, truncated
 * or wrong file is reported expected beside found and never kept.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateDinoModel } from "../../src/metrics/dino.ts";
import { downloadModelExport } from "../../src/metrics/dino-download.ts";
import { DINOV2_BASE_ONNX, type ModelExport } from "../../src/metrics/dino-export.ts";
import { defaultTransformersDirs, exportDir } from "../../src/metrics/dino-location.ts";
import { createVisualMetric } from "../../src/metrics/visual.ts";
import { shoppingPage } from "../support/evaluator-images.ts";
import { writeTinyDinoModel } from "../support/evaluator-tiny-dino.ts";

const REPO = DINOV2_BASE_ONNX.repo;
const REVISION = DINOV2_BASE_ONNX.revision;
const FILES = ["config.json", "preprocessor_config.json", "onnx/model.onnx"];

let scratch: string;
let modelDir: string;
let server: http.Server;
let endpoint: string;
const requests: string[] = [];
/** What the stand-in hub serves in place of a file, by path inside the repository. */
const overrides = new Map<string, Buffer>();

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");
const tinyFile = (file: string) => fs.readFileSync(path.join(modelDir, ...file.split("/")));

/** The tiny model's manifest: hashes for the preprocessor and the ONNX file, JSON values for config.json (both checks). */
function tinyManifest(): ModelExport {
  return {
    repo: REPO,
    revision: REVISION,
    files: [
      { path: "config.json", size: tinyFile("config.json").length, json: { model_type: "dinov2" } },
      ...FILES.slice(1).map((file) => ({ path: file, size: tinyFile(file).length, sha256: sha256(tinyFile(file)) })),
    ],
  };
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) => (entry.isFile() ? [entry.name] : []));
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-dino-hub-"));
  modelDir = writeTinyDinoModel();
  const prefix = `/${REPO}/resolve/${REVISION}/`;
  server = http.createServer((request, response) => {
    const url = decodeURIComponent(request.url ?? "");
    requests.push(url);
    // The hub sends large files from elsewhere: a redirect, as huggingface.co does to its CDN.
    if (url === `${prefix}onnx/model.onnx`) {
      response.writeHead(302, { location: "/cdn/model-onnx" });
      response.end();
      return;
    }
    const file = url === "/cdn/model-onnx" ? "onnx/model.onnx" : url.startsWith(prefix) ? url.slice(prefix.length) : undefined;
    if (!file || !FILES.includes(file)) {
      response.writeHead(404, { "content-type": "text/plain" });
      response.end("Entry not found");
      return;
    }
    const body = overrides.get(file) ?? tinyFile(file);
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length) });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.rmSync(modelDir, { recursive: true, force: true });
});

describe("downloading the DINO export into the transformers.js cache layout", () => {
  it("fetches every file from the hub-shaped host, verifies it, and the folder loads through transformers.js", async () => {
    const cacheRoot = path.join(scratch, "cache-a");
    requests.length = 0;
    const lines: string[] = [];
    const report = await downloadModelExport({ model: tinyManifest(), cacheRoot, endpoint, say: (line) => lines.push(line) });
    expect(report.modelDir).toBe(path.join(cacheRoot, "onnx-community", "dinov2-base"));
    expect(report.files.map(({ path: file, status, check }) => [file, status, check])).toEqual([
      ["config.json", "downloaded", "json"],
      ["preprocessor_config.json", "downloaded", "sha256"],
      ["onnx/model.onnx", "downloaded", "sha256"],
    ]);
    expect(requests).toEqual([...FILES.map((file) => `/${REPO}/resolve/${REVISION}/${file}`), "/cdn/model-onnx"]);
    for (const file of FILES) expect(fs.readFileSync(path.join(report.modelDir, ...file.split("/")))).toEqual(tinyFile(file));
    expect(filesUnder(report.modelDir).sort()).toEqual(["config.json", "model.onnx", "preprocessor_config.json"]);

    // Found where the evaluator looks, and loaded by transformers.js as the DINO metric.
    const location = locateDinoModel({ IWR_TRANSFORMERS_CACHE: cacheRoot });
    expect(location).toEqual({ found: true, modelDir: report.modelDir });
    const metric = await createVisualMetric({ location });
    expect(metric.info).toMatchObject({ name: "dinov2-base-cls-cosine", dino: { status: "available", modelDir: report.modelDir } });
    const page = await shoppingPage();
    expect(await metric.similarity(page, page)).toBeCloseTo(1, 6);

    // A second run finds every file in place and verified: nothing is fetched.
    requests.length = 0;
    const again = await downloadModelExport({ model: tinyManifest(), cacheRoot, endpoint, say: () => undefined });
    expect(again.files.map((file) => file.status)).toEqual(["already in place", "already in place", "already in place"]);
    expect(requests).toEqual([]);
  });

  it("reports a corrupted, a truncated and a wrong file, expected beside found, and keeps none of them", async () => {
    const cacheRoot = path.join(scratch, "cache-b");
    const onnx = Buffer.from(tinyFile("onnx/model.onnx"));
    onnx[onnx.length - 1] = (onnx.at(-1) ?? 0) ^ 0xff;
    overrides.set("onnx/model.onnx", onnx);
    overrides.set("preprocessor_config.json", tinyFile("preprocessor_config.json").subarray(0, 100));
    const wrongConfig = Buffer.from(tinyFile("config.json").toString("utf8").replace('"dinov2"', '"vit123"'));
    overrides.set("config.json", wrongConfig);
    try {
      const manifest = tinyManifest();
      const failure = downloadModelExport({ model: manifest, cacheRoot, endpoint, say: () => undefined });
      await expect(failure).rejects.toThrow(/did not verify/);
      const message = await failure.catch((error: Error) => error.message);
      expect(message).toContain(`onnx/model.onnx: sha256 ${sha256(onnx)}, expected ${manifest.files[2]!.sha256}`);
      expect(message).toContain(`preprocessor_config.json: 100 bytes, expected ${manifest.files[1]!.size}`);
      expect(message).toContain('config.json: model_type is "vit123", expected "dinov2"');
      // Nothing that failed is left, not even a temporary file.
      expect(filesUnder(exportDir(cacheRoot, manifest))).toEqual([]);
    } finally {
      overrides.clear();
    }
  });

  it("a file the host does not have is named with its address and HTTP status", async () => {
    const manifest = { ...tinyManifest(), files: [{ path: "onnx/model_fp16.onnx", size: 10, sha256: "0".repeat(64) }] };
    await expect(downloadModelExport({ model: manifest, cacheRoot: path.join(scratch, "cache-c"), endpoint, say: () => undefined })).rejects.toThrow(
      `onnx/model_fp16.onnx: HTTP 404 Not Found for ${endpoint}/${REPO}/resolve/${REVISION}/onnx/model_fp16.onnx`,
    );
  });
});

/** `iwr setup` in a child process, its environment pointing at the stand-in hub and a scratch cache. */
function iwrSetup(args: readonly string[], cacheRoot: string): Promise<{ code: number | null; stderr: string }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, HF_ENDPOINT: endpoint, IWR_TRANSFORMERS_CACHE: cacheRoot };
  delete environment.IWR_DINO_MODEL_DIR;
  const child = spawn(process.execPath, ["bin/iwr.js", "setup", ...args], { env: environment, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

describe("which visual metric iwr setup announces", () => {
  it("looks in transformers.js's own folders without loading it: its defaults derived as its env.js derives them", async () => {
    const { env } = await import("@huggingface/transformers");
    expect(defaultTransformersDirs()).toEqual({ cacheDir: env.cacheDir, localModelPath: env.localModelPath });
  });
});

describe("iwr setup --dino (a child process, HF_ENDPOINT at the stand-in hub)", () => {
  it("downloads and verifies with a manifest, then says in one line that DINO will be used", async () => {
    const cacheRoot = path.join(scratch, "cli-cache");
    const manifest = path.join(scratch, "tiny-manifest.json");
    fs.writeFileSync(manifest, JSON.stringify(tinyManifest()));
    const result = await iwrSetup(["--dino", "--dino-manifest", manifest], cacheRoot);
    const dir = path.join(cacheRoot, "onnx-community", "dinov2-base");
    expect(result.stderr).toContain("onnx/model.onnx: downloaded");
    expect(result.stderr).toContain(`setup: DINO model verified in ${dir}`);
    expect(result.stderr).toContain(`setup: visual metric: DINO (facebook/dinov2-base from ${dir})`);
    expect(result.code).toBe(0);
  }, 60_000);

  it("with the recorded manifest, refuses the stand-in's tiny files, printing each mismatch, exit 3, and says the fallback will be used", async () => {
    const cacheRoot = path.join(scratch, "cli-cache-recorded");
    const result = await iwrSetup(["--dino"], cacheRoot);
    const onnx = tinyFile("onnx/model.onnx");
    expect(result.stderr).toContain(
      `onnx/model.onnx: ${onnx.length} bytes, expected 346627111; sha256 ${sha256(onnx)}, expected ${DINOV2_BASE_ONNX.files[2]!.sha256}`,
    );
    expect(result.stderr).toContain(`config.json: ${tinyFile("config.json").length} bytes, expected 899`);
    expect(result.code).toBe(3);
    expect(filesUnder(cacheRoot)).toEqual([]);
    const status = await iwrSetup([], cacheRoot);
    expect(status.stderr).toMatch(/setup: visual metric: the ssim-gray-256 fallback, not DINO/);
    expect(status.code).toBe(0);
  }, 60_000);
});
