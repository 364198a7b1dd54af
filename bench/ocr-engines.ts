/**
 * `npm run bench:ocr [-- --data tasks/iwr-mini.jsonl,runs/natural/natural.jsonl --results <dir>]`:
 * native Tesseract (Debian's `tesseract-ocr`) against tesseract.js, image by image, on
 * every checkpoint of the given task sets: what each reads (identical texts, and how alike
 * the two texts are by the §3.5 similarity), and the CPU each takes per image (this
 * process and the processes below it, read before and after each image; one worker each,
 * one image at a time, after a warm-up read that is not counted). Both run with the same
 * trained data, page segmentation mode and resolution (src/metrics/ocr-engines.ts), and
 * neither reads from or writes to the image-readings cache.
 *
 * With `--truth`, which engine reads better: each task's true page is replayed (the
 * evaluator, deterministic mode) and at every screenshot that is pixel for pixel the
 * task's checkpoint, the text the page shows inside the viewport is taken from the DOM
 * (text nodes with a box on screen, and the values of fields). Each engine's words are
 * matched against those words (lower-cased letters and digits, as multisets): recall,
 * precision and F1, per corpus. Text drawn on a canvas or in an image is not in the DOM,
 * so both engines' precision is understated alike.
 *
 * With `--results`, the §3.5 OCR score of every (checkpoint, evalpoint) pair that the
 * eval.json files under those folders scored (a calibration run: reference, blank and
 * near-miss pages), under each engine: the mean score and how far the two engines'
 * scores are apart. Last, the images whose two texts differ most, side by side, for a
 * reader to judge which engine read better.
 *
 * The native engine's CPU floor is the other engine: printed as native / tesseract.js.
 */
import fs from "node:fs";
import path from "node:path";
import { nonNegativeInteger, parseScriptArgs } from "../scripts/cli-args.ts";

const { values } = parseScriptArgs({
  name: "bench:ocr",
  command: "npm run bench:ocr --",
  summary:
    "Reads every checkpoint of the task sets with native Tesseract and with tesseract.js (same data and options, no cache) and prints " +
    "how alike the texts are, the CPU per image of each, and with --results the OCR scores of the pairs those eval.json files scored. " +
    "~3 min for the bundled suite.",
  options: {
    data: {
      type: "string",
      value: "<a.jsonl,b.jsonl>",
      description: "task files whose checkpoints are read",
      default: "tasks/iwr-mini.jsonl",
      parse: (text: string) => {
        const files = text.split(",").map((file) => file.trim());
        const missing = files.find((file) => file === "" || !fs.existsSync(file));
        if (missing !== undefined) throw new Error(`${missing || "(empty)"} does not exist`);
        return files;
      },
    },
    results: {
      type: "string",
      value: "<dir,dir>",
      description: "results folders whose eval.json pairs are scored under both engines",
      parse: (text: string) => {
        const dirs = text.split(",").map((dir) => dir.trim());
        const missing = dirs.find((dir) => dir === "" || !fs.existsSync(dir));
        if (missing !== undefined) throw new Error(`${missing || "(empty)"} does not exist`);
        return dirs;
      },
    },
    truth: { type: "boolean", description: "replay the true pages and score each engine's words against the DOM's visible text" },
    show: { type: "string", value: "<n>", description: "how many of the most different texts to print", default: "6", parse: nonNegativeInteger },
    json: { type: "string", value: "<file>", description: "also write every image's texts and CPU times to this JSON file" },
  },
});

const [
  { configureLogger },
  { loadTasks },
  { startNativeTesseract, startTesseractJs },
  { findTesseract },
  { joinOcrSegments, textSimilarity },
  { treeCpuSecNow },
  { visibleTexts },
] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/tasks/loader.ts"),
  import("../src/metrics/ocr-engines.ts"),
  import("../src/setup/find-tools.ts"),
  import("../src/metrics/text-similarity.ts"),
  import("./process-tree-cpu.ts"),
  import("./visible-text.ts"),
]);

type Engine = Awaited<ReturnType<typeof startTesseractJs>>;

interface Reading {
  text: string;
  cpuSec: number;
  wallSec: number;
}

interface ImageRow {
  corpus: string;
  image: string;
  native: Reading;
  wasm: Reading;
  /** The DOM's visible text when the true page showed exactly this checkpoint (--truth). */
  truth?: string;
}

const mean = (numbers: readonly number[]) => (numbers.length === 0 ? 0 : numbers.reduce((sum, value) => sum + value, 0) / numbers.length);

async function readTimed(engine: Engine, png: Buffer): Promise<Reading> {
  const cpuBefore = treeCpuSecNow();
  const started = performance.now();
  const text = joinOcrSegments(await engine.readSegments(png));
  return { text, cpuSec: treeCpuSecNow() - cpuBefore, wallSec: (performance.now() - started) / 1000 };
}

/** Every eval.json under `dir`. */
function evalFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => path.basename(name) === "eval.json")
    .map((name) => path.join(dir, name));
}

function pairsOf(dirs: readonly string[]): Array<{ checkpoint: string; evalpoint: string }> {
  const pairs: Array<{ checkpoint: string; evalpoint: string }> = [];
  for (const file of dirs.flatMap(evalFiles)) {
    const record = JSON.parse(fs.readFileSync(file, "utf8")) as { steps?: Array<{ checkpointPath: string; evalpointPath: string }> };
    for (const step of record.steps ?? []) {
      const evalpoint = path.resolve(path.dirname(file), step.evalpointPath);
      if (fs.existsSync(step.checkpointPath) && fs.existsSync(evalpoint)) pairs.push({ checkpoint: step.checkpointPath, evalpoint });
    }
  }
  return pairs;
}

interface WordMatch {
  recall: number;
  precision: number;
  f1: number;
}

/** Lower-cased runs of letters and digits. */
function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** How many of the truth's words the reading has (recall), how many of its words are the truth's (precision), as multisets. */
function wordMatch(reading: string, truth: string): WordMatch {
  const wanted = new Map<string, number>();
  for (const word of words(truth)) wanted.set(word, (wanted.get(word) ?? 0) + 1);
  const read = words(reading);
  let matched = 0;
  for (const word of read) {
    const left = wanted.get(word) ?? 0;
    if (left > 0) {
      matched += 1;
      wanted.set(word, left - 1);
    }
  }
  const truthCount = words(truth).length;
  const recall = truthCount === 0 ? 1 : matched / truthCount;
  const precision = read.length === 0 ? (truthCount === 0 ? 1 : 0) : matched / read.length;
  return { recall, precision, f1: recall + precision === 0 ? 0 : (2 * recall * precision) / (recall + precision) };
}

/** The words one text has more often than the other (multiset difference), in order. */
function extraWords(text: string, other: string): string {
  const counts = new Map<string, number>();
  for (const word of other.split(/\s+/)) counts.set(word, (counts.get(word) ?? 0) + 1);
  const extra: string[] = [];
  for (const word of text.split(/\s+/)) {
    const left = counts.get(word) ?? 0;
    if (left > 0) counts.set(word, left - 1);
    else if (word !== "") extra.push(word);
  }
  return extra.join(" ") || "(none)";
}

async function main(): Promise<number> {
  configureLogger({ level: "warn" });
  const executable = findTesseract();
  if (!executable) {
    console.error("bench:ocr: native Tesseract not found (run `iwr setup` as root on Debian, or set IWR_TESSERACT)");
    return 1;
  }
  const [native, wasm] = [await startNativeTesseract(executable, 1, "page"), await startTesseractJs(1, "page")];
  try {
    console.log(`bench:ocr — ${native.identity}\n        vs ${wasm.identity}`);
    const corpora = await Promise.all(
      values.data.map(async (file) => {
        const tasks = await loadTasks(file);
        return { name: path.basename(file, ".jsonl"), tasks, images: tasks.flatMap((task) => task.truth.checkpointPaths) };
      }),
    );
    const first = corpora.flatMap((corpus) => corpus.images)[0];
    if (first) await Promise.all([native.readSegments(fs.readFileSync(first)), wasm.readSegments(fs.readFileSync(first))]);

    const rows: ImageRow[] = [];
    for (const corpus of corpora) {
      for (const image of corpus.images) {
        const png = fs.readFileSync(image);
        rows.push({ corpus: corpus.name, image, native: await readTimed(native, png), wasm: await readTimed(wasm, png) });
      }
    }

    console.log("\ncorpus           images  identical  similarity mean / min  CPU per image: native  tesseract.js  native / js");
    for (const corpus of [...corpora.map((entry) => entry.name), "all"]) {
      const mine = rows.filter((row) => corpus === "all" || row.corpus === corpus);
      const similarities = mine.map((row) => textSimilarity(row.native.text, row.wasm.text));
      const nativeCpu = mean(mine.map((row) => row.native.cpuSec));
      const wasmCpu = mean(mine.map((row) => row.wasm.cpuSec));
      console.log(
        `${corpus.padEnd(16)} ${String(mine.length).padStart(6)}  ${String(mine.filter((row) => row.native.text === row.wasm.text).length).padStart(9)}` +
          `  ${mean(similarities).toFixed(4).padStart(10)} / ${Math.min(1, ...similarities).toFixed(4)}` +
          `  ${nativeCpu.toFixed(3).padStart(17)} s  ${wasmCpu.toFixed(3).padStart(10)} s  ${(nativeCpu / wasmCpu).toFixed(2).padStart(11)}`,
      );
    }
    const wall = (pick: (row: ImageRow) => Reading) => mean(rows.map((row) => pick(row).wallSec));
    if (values.truth) {
      const truths = new Map<string, string>();
      for (const corpus of corpora) for (const [image, text] of await visibleTexts(corpus.tasks)) truths.set(image, text);
      for (const row of rows) {
        const truth = truths.get(row.image);
        if (truth !== undefined) row.truth = truth;
      }
      console.log("\nagainst the DOM's visible text: word recall / precision / F1 (mean over the checkpoints the true page reproduced)");
      console.log("corpus           images  native                    tesseract.js              native F1 better / worse");
      for (const corpus of [...corpora.map((entry) => entry.name), "all"]) {
        const mine = rows.filter((row) => row.truth !== undefined && (corpus === "all" || row.corpus === corpus));
        const scores = mine.map((row) => ({ native: wordMatch(row.native.text, row.truth!), wasm: wordMatch(row.wasm.text, row.truth!) }));
        const line = (pick: (score: (typeof scores)[number]) => WordMatch) =>
          ["recall", "precision", "f1"].map((key) => mean(scores.map((score) => pick(score)[key as keyof WordMatch])).toFixed(3)).join(" / ");
        console.log(
          `${corpus.padEnd(16)} ${String(mine.length).padStart(6)}  ${line((score) => score.native).padEnd(24)}  ${line((score) => score.wasm).padEnd(24)}  ` +
            `${scores.filter((score) => score.native.f1 > score.wasm.f1).length} / ${scores.filter((score) => score.native.f1 < score.wasm.f1).length}`,
        );
      }
    }
    console.log(`wall per image (one at a time): native ${wall((row) => row.native).toFixed(3)} s, tesseract.js ${wall((row) => row.wasm).toFixed(3)} s`);

    if (values.results) {
      const pairs = pairsOf(values.results);
      const texts = new Map<string, { native: string; wasm: string }>();
      for (const row of rows) texts.set(row.image, { native: row.native.text, wasm: row.wasm.text });
      for (const file of new Set(pairs.flatMap((pair) => [pair.checkpoint, pair.evalpoint]))) {
        if (texts.has(file)) continue;
        const png = fs.readFileSync(file);
        texts.set(file, { native: joinOcrSegments(await native.readSegments(png)), wasm: joinOcrSegments(await wasm.readSegments(png)) });
      }
      const scores = pairs.map((pair) => {
        const [checkpoint, evalpoint] = [texts.get(pair.checkpoint)!, texts.get(pair.evalpoint)!];
        return { native: textSimilarity(checkpoint.native, evalpoint.native), wasm: textSimilarity(checkpoint.wasm, evalpoint.wasm) };
      });
      const gaps = scores.map((score) => Math.abs(score.native - score.wasm));
      console.log(
        `\nOCR scores of ${pairs.length} scored pairs: mean native ${mean(scores.map((score) => score.native)).toFixed(4)}, ` +
          `tesseract.js ${mean(scores.map((score) => score.wasm)).toFixed(4)}; |difference| mean ${mean(gaps).toFixed(4)}, ` +
          `max ${Math.max(0, ...gaps).toFixed(4)}, over 0.05 in ${gaps.filter((gap) => gap > 0.05).length}; ` +
          `native higher in ${scores.filter((score) => score.native > score.wasm).length}, ` +
          `lower in ${scores.filter((score) => score.native < score.wasm).length}`,
      );
    }

    const differing = rows
      .map((row) => ({ row, similarity: textSimilarity(row.native.text, row.wasm.text) }))
      .filter((entry) => entry.similarity < 1)
      .sort((a, b) => a.similarity - b.similarity)
      .slice(0, values.show);
    for (const { row, similarity } of differing) {
      console.log(`\n${row.image} (similarity ${similarity.toFixed(3)})`);
      console.log(`  only native:       ${extraWords(row.native.text, row.wasm.text)}`);
      console.log(`  only tesseract.js: ${extraWords(row.wasm.text, row.native.text)}`);
    }
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ native: native.identity, wasm: wasm.identity, rows }, null, 2)}\n`);
    return 0;
  } finally {
    await Promise.all([native.close(), wasm.close()]);
  }
}

process.exitCode = await main();
