/**
 * `npm run bench:element-index`: what it costs to find the page's controls, per Click or
 * Type of a replay. The element index runs through DevTools with the console's
 * `getEventListeners` (to see addEventListener listeners); the floor is the same
 * collector run as a plain page script (it sees handlers set as properties only), on the
 * same page in the same run. Also timed: reading the page's text blocks, which the
 * offline grounder does only for a description that places its target next to words.
 *
 * Pages: N rows of text, a tenth of them wired with addEventListener, a tenth with
 * `onclick`, a tenth with a pointer cursor, and a button each. Medians of RUNS runs,
 * alternating the two ways; the machine may be shared, so read ratios, not milliseconds.
 */
import { parseScriptArgs, positiveIntegerList } from "../scripts/cli-args.ts";

const { values } = parseScriptArgs({
  name: "bench:element-index",
  command: "npm run bench:element-index --",
  summary: "Times indexing a page's controls with DevTools' listener lookup against the same collector as a plain page script, and reading text blocks.",
  options: {
    rows: {
      type: "string",
      value: "<200,2000,10000>",
      description: "page sizes in rows (each row holds three elements)",
      default: "200,2000,10000",
      parse: positiveIntegerList,
    },
  },
});

const [{ collectInPage }, { HARNESS_VIEWPORT_EXPANSION_PX, INDEX_ATTRIBUTE, indexInteractiveElements, MAX_INDEXED_ELEMENTS }, launch, scripts, texts] =
  await Promise.all([
    import("../src/browser/element-collector.ts"),
    import("../src/browser/element-index.ts"),
    import("../src/browser/launch.ts"),
    import("../src/browser/page-scripts.ts"),
    import("../src/browser/text-blocks.ts"),
  ]);

const RUNS = 7;

function pageOf(rows: number): string {
  return `<!doctype html><html><body><div id="list"></div><script>{
    const list = document.getElementById("list");
    for (let i = 0; i < ${rows}; i++) {
      const row = document.createElement("div");
      row.innerHTML = "<span>Row " + i + " of the list</span> <em>note</em> <button>Open</button>";
      const span = row.firstChild;
      if (i % 10 === 0) span.addEventListener("click", () => {});
      if (i % 10 === 1) span.onclick = () => {};
      if (i % 10 === 2) span.style.cursor = "pointer";
      list.appendChild(row);
    }
  }</script></body></html>`;
}

async function timed(task: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await task();
  return performance.now() - started;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const browser = await launch.sharedBrowser();
const args = { attribute: INDEX_ATTRIBUTE, max: MAX_INDEXED_ELEMENTS, expansion: HARNESS_VIEWPORT_EXPANSION_PX };
console.log("rows  elements  devtools ms  plain ms  ratio  listeners found  text blocks ms");
try {
  for (const rows of values.rows) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.setContent(pageOf(rows));
    const elements = await page.evaluate(() => document.querySelectorAll("*").length);
    const devtools: number[] = [];
    const plain: number[] = [];
    const blocks: number[] = [];
    let listeners = 0;
    for (let run = 0; run < RUNS; run++) {
      devtools.push(
        await timed(async () => {
          listeners = (await indexInteractiveElements(page)).filter((el) => el.clickableBecause === "listener").length;
        }),
      );
      plain.push(await timed(() => scripts.evaluateInPage(page, collectInPage, args)));
      blocks.push(await timed(() => texts.collectTextBlocks(page)));
    }
    const [d, p, b] = [median(devtools), median(plain), median(blocks)];
    console.log(
      `${String(rows).padStart(5)}  ${String(elements).padStart(8)}  ${d.toFixed(1).padStart(11)}  ${p.toFixed(1).padStart(8)}` +
        `  ${(d / p).toFixed(2).padStart(5)}` +
        `  ${String(listeners).padStart(15)}  ${b.toFixed(1).padStart(14)}`,
    );
    await page.close();
  }
} finally {
  await launch.closeSharedBrowser();
}
