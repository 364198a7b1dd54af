/**
 * `iwr setup --dino`: fetches an ONNX export of facebook/dinov2-base from the model hub
 * into a transformers.js cache folder, in the hub's layout (`<cache>/<owner>/<name>/<file>`,
 * the layout transformers.js's file cache uses), where `locateDinoModel` finds it.
 *
 * Each file is streamed into a temporary file beside its place, hashed as it comes, and
 * renamed into place only when its size (and its sha256, or for a JSON file without a
 * recorded hash its values) are the recorded ones (dino-export.ts); what does not match
 * is deleted and every mismatch is reported, expected beside found. A file already in
 * place that passes the same check is kept. Nothing is written anywhere else.
 *
 * Where from: `HF_ENDPOINT` (the hub's own variable for a mirror) when set, else
 * transformers.js's `env.remoteHost`, with its `env.remotePathTemplate`
 * (`{model}/resolve/{revision}/`).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { env } from "@huggingface/transformers";
import { errorMessage, IwrError } from "../errors.ts";
import { sweepAbandonedTemps, tempPathBeside } from "../files/atomic.ts";
import { DINOV2_BASE_ONNX, type ModelExport, type ModelFile } from "./dino-export.ts";
import { exportDir, transformersCacheDir } from "./dino-location.ts";

/** A download that receives nothing for this long is given up. */
const STALL_MS = 60_000;
const MEGABYTE = 1_000_000;

/** The hub's address of one file of the export at its revision. */
export function fileUrl(endpoint: string, model: ModelExport, file: ModelFile): string {
  const folder = env.remotePathTemplate.replaceAll("{model}", model.repo).replaceAll("{revision}", encodeURIComponent(model.revision));
  return `${endpoint.replace(/\/+$/, "")}/${folder.replace(/^\/+/, "")}${file.path.split("/").map(encodeURIComponent).join("/")}`;
}

export function hubEndpoint(environment: NodeJS.ProcessEnv = process.env): string {
  return environment.HF_ENDPOINT || env.remoteHost;
}

type Check = "sha256" | "json";

const sizeText = (bytes: number): string => (bytes >= MEGABYTE ? `${(bytes / MEGABYTE).toFixed(1)} MB` : `${bytes} bytes`);

/** What is wrong with a file's bytes against its record (empty when nothing), and which check it passed. */
function problemsWith(record: ModelFile, size: number, sha256: string, readJson: () => unknown): { problems: string[]; check: Check } {
  const problems: string[] = [];
  if (size !== record.size) problems.push(`${size} bytes, expected ${record.size}`);
  if (record.sha256) {
    if (sha256 !== record.sha256) problems.push(`sha256 ${sha256}, expected ${record.sha256}`);
    return { problems, check: "sha256" };
  }
  if (record.json && problems.length === 0) {
    let value: unknown;
    try {
      value = readJson();
    } catch (error) {
      problems.push(`not JSON (${errorMessage(error)})`);
      return { problems, check: "json" };
    }
    const object = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
    for (const [key, expected] of Object.entries(record.json)) {
      if (object[key] !== expected) problems.push(`${key} is ${JSON.stringify(object[key])}, expected ${JSON.stringify(expected)}`);
    }
  }
  return { problems, check: "json" };
}

async function hashOf(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest("hex") };
}

/** A file already in place: its check when it passes, else undefined (it is fetched again). */
async function verifiedInPlace(target: string, record: ModelFile): Promise<Check | undefined> {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  if (!stat?.isFile() || stat.size !== record.size) return undefined;
  const { size, sha256 } = await hashOf(target);
  const { problems, check } = problemsWith(record, size, sha256, () => JSON.parse(fs.readFileSync(target, "utf8")));
  return problems.length === 0 ? check : undefined;
}

/** Streams one file into a temporary file beside `target`; renamed into place only when it checks out. */
async function fetchFile(url: string, target: string, record: ModelFile, say: (line: string) => void): Promise<{ check: Check } | { problems: string[] }> {
  const controller = new AbortController();
  let stalled: NodeJS.Timeout = setTimeout(() => controller.abort(), STALL_MS);
  const temp = tempPathBeside(target);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const handle = await fs.promises.open(temp, "w");
  let closed = false;
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: "follow" });
    if (!response.ok || !response.body) return { problems: [`HTTP ${response.status} ${response.statusText} for ${url}`] };
    const hash = createHash("sha256");
    let size = 0;
    let reported = 0;
    const reader = response.body.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      const chunk = next.value;
      clearTimeout(stalled);
      stalled = setTimeout(() => controller.abort(), STALL_MS);
      size += chunk.length;
      // More than the file's size: it is not the file; stop reading.
      if (size > record.size) {
        await reader.cancel().catch(() => undefined);
        return { problems: [`more than the expected ${record.size} bytes came from ${url}`] };
      }
      hash.update(chunk);
      await handle.write(chunk);
      const tenth = Math.floor((size / Math.max(1, record.size)) * 10);
      if (record.size >= 10 * MEGABYTE && tenth > reported) {
        reported = tenth;
        say(`  ${record.path}: ${(size / MEGABYTE).toFixed(1)} of ${(record.size / MEGABYTE).toFixed(1)} MB`);
      }
    }
    await handle.close();
    closed = true;
    const { problems, check } = problemsWith(record, size, hash.digest("hex"), () => JSON.parse(fs.readFileSync(temp, "utf8")));
    if (problems.length > 0) return { problems };
    fs.renameSync(temp, target);
    return { check };
  } catch (error) {
    const why = controller.signal.aborted ? `nothing came for ${STALL_MS / 1000} s` : errorMessage(error);
    return { problems: [`could not fetch ${url}: ${why}`] };
  } finally {
    clearTimeout(stalled);
    if (!closed) await handle.close().catch(() => undefined);
    fs.rmSync(temp, { force: true });
  }
}

export interface ModelDownloadReport {
  modelDir: string;
  files: Array<{ path: string; status: "downloaded" | "already in place"; check: Check; bytes: number }>;
}

/**
 * Fetches every file of `model` into `<cacheRoot>/<owner>/<name>/` and verifies it; throws
 * SETUP_MISSING naming every file that did not match (expected beside found), after
 * trying them all. Files that matched stay in place, so a second run fetches only the rest.
 */
export async function downloadModelExport(
  options: { model?: ModelExport; cacheRoot?: string; endpoint?: string; say?: (line: string) => void } = {},
): Promise<ModelDownloadReport> {
  const model = options.model ?? DINOV2_BASE_ONNX;
  const say = options.say ?? ((line: string) => console.error(line));
  const modelDir = exportDir(options.cacheRoot ?? transformersCacheDir(), model);
  const endpoint = options.endpoint ?? hubEndpoint();
  const files: ModelDownloadReport["files"] = [];
  const failures: string[] = [];
  for (const record of model.files) {
    const target = path.join(modelDir, ...record.path.split("/"));
    const kept = await verifiedInPlace(target, record);
    if (kept) {
      files.push({ path: record.path, status: "already in place", check: kept, bytes: record.size });
      continue;
    }
    // What a killed download left beside this file (its writer gone).
    if (fs.existsSync(path.dirname(target))) sweepAbandonedTemps(path.dirname(target));
    const url = fileUrl(endpoint, model, record);
    say(`  ${record.path}: fetching ${sizeText(record.size)} from ${url}`);
    const outcome = await fetchFile(url, target, record, say);
    if ("problems" in outcome) failures.push(`${record.path}: ${outcome.problems.join("; ")}`);
    else files.push({ path: record.path, status: "downloaded", check: outcome.check, bytes: record.size });
  }
  if (failures.length > 0) {
    throw new IwrError(
      "SETUP_MISSING",
      `the ${model.repo} export (revision ${model.revision}) did not verify; nothing that failed was kept:\n  ${failures.join("\n  ")}`,
      { modelDir, endpoint },
    );
  }
  return { modelDir, files };
}
