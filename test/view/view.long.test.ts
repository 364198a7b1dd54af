/**
 * `iwr view` in a real browser over real run folders. A tiny experiment runs first (two
 * bundled tasks; the reference, blank and no-script calibration arms and the agent, its
 * models a local OpenAI-compatible server answering from a script: a fixture, never a
 * result; every page self-checked, so cells have video states), then
 * scripts/synthesize-run.ts copies and renames its cells into a 4,000-cell run folder.
 *
 * Over both, in Chromium: every page opens with no console error (its load time printed,
 * not asserted: speed is measured), the filters narrow the tasks as the records say they
 * should, a cell shows its checkpoint, screenshot and video frame, an agent cell its drafts,
 * critique and diff; the view writes nothing into the run folder and follows cells written
 * while it runs. report.html's size is printed for both and grows by at most ~2 KB a cell.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { request as httpRequest } from "node:http";
import path from "node:path";
import type { Browser, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../../src/browser/launch.ts";
import { replayActionOf } from "../../src/replay/replay.ts";
import { writeReport } from "../../src/report/report.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { startViewServer } from "../../src/view/server.ts";
import { CRITIQUE_REPLY, scriptedAgentModel, storyboardReply } from "../support/agent-scripts.ts";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, evaluatorBlock, experimentFixture, minimalPageReply, readJson, TEST_MS, writeConfig } from "../support/experiment.ts";

const TASK_IDS = [1, 3];
const SYNTHETIC_CELLS = 4000;
const fixture = experimentFixture("view");
let tasks: Task[];
let runDir: string;
let browser: Browser;

interface ReportCell {
  arm: string;
  repeat: number;
  taskId: number;
  failure?: { kind: string; step: number | null; detail: string };
}

/** Every file under `dir` with its size and modification time: what "the view wrote nothing" is checked against. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const stat = fs.statSync(full);
        files.set(full, `${stat.size}:${stat.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return files;
}

/**
 * A page that records console errors and failed requests. A request the browser itself
 * cancelled (net::ERR_ABORTED: the live-mode event stream and lazy images still loading
 * when the test navigates to the next page) is not a failure of the view; any other failure
 * (a refused connection, a reset, a 4xx/5xx answer the page logs) is.
 */
async function watchedPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on("console", (message) => void (message.type() === "error" && errors.push(`${message.text()} (${message.location().url})`)));
  page.on("pageerror", (error) => void errors.push(error.message));
  page.on("requestfailed", (request) => {
    const reason = request.failure()?.errorText ?? "unknown";
    if (reason !== "net::ERR_ABORTED") errors.push(`request failed: ${request.url()} (${reason})`);
  });
  return { page, errors };
}

/**
 * The status of a request sent with node:http, whose Host header is the one given (fetch
 * cannot send it: undici sets Host from the URL and drops a caller's).
 */
function statusFor(url: string, options: { host?: string; method?: string } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? "GET", ...(options.host ? { headers: { Host: options.host } } : {}) }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", reject);
    request.end();
  });
}

/** Opens `url` afresh and waits for `selector`: the page's load time in ms (printed by the caller). */
async function open(page: Page, url: string, selector: string): Promise<number> {
  await page.goto("about:blank");
  const started = Date.now();
  await page.goto(url, { waitUntil: "commit" });
  await page.waitForSelector(selector, { timeout: 60_000 });
  return Date.now() - started;
}

/** Scrolls through the page so lazy images load, then waits for the network to settle. */
async function loadLazyImages(page: Page): Promise<void> {
  const height = await page.evaluate(() => document.body.scrollHeight);
  for (let y = 0; y <= height; y += 600) await page.evaluate((top) => window.scrollTo(0, top), y);
  await page.waitForLoadState("networkidle");
}

const taskRows = (page: Page) =>
  page.locator("[data-testid=tasks-table] tbody tr").evaluateAll((rows) => rows.map((row) => Number(row.getAttribute("data-task"))));

function runScript(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--import", "tsx", "scripts/synthesize-run.ts", ...args], { timeout: 600_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

beforeAll(async () => {
  tasks = (await loadTasks(DATA)).filter((task) => TASK_IDS.includes(task.id));
  const model = scriptedAgentModel({
    analyze: [storyboardReply(tasks[0]!.line.action_sequence.map(replayActionOf))],
    draft: [minimalPageReply("first draft")],
    critique: [CRITIQUE_REPLY],
    revise: [minimalPageReply("revised draft")],
  });
  fixture.server().setReplyFunction(model.reply);
  const config = writeConfig(
    path.join(fixture.dir(), "configs", "view.yaml"),
    `name: view
tasks:
  file: ${DATA}
  ids: [${TASK_IDS.join(", ")}]
out: ../runs/view
selfCheck: given
${evaluatorBlock}arms:
  - name: reference
    kind: reference
  - name: blank
    kind: blank
  - name: no-script
    kind: mutant:no-script
  - name: agent
    kind: agent
    model: gpt-4o
    baseURL: ${fixture.server().baseURL}
    agent: { maxIterations: 1, replay: false }
`,
  );
  const output: string[] = [];
  const code = await runIwrCapturing(output, ["run", config], { quiet: false });
  expect(code, output.join("\n")).toBe(0);
  runDir = path.join(fixture.dir(), "runs", "view");
  // The closing line names report.html with its size and points to iwr view.
  expect(output.join("\n")).toMatch(/report: .*report\.html \(\d+(\.\d)? KB; also report\.md, report\.json\) — iwr view .* shows every cell/);
  browser = await launchBrowser();
}, TEST_MS);

afterAll(async () => {
  await browser?.close();
});

describe("iwr view over a real run folder", () => {
  it(
    "serves the arms, tasks, a task and cells on 127.0.0.1 only, filters as the records say, shows each step's images, and writes nothing into the run",
    async () => {
      const before = snapshot(runDir);
      const report = readJson(path.join(runDir, "report.json"));
      const cells = report.cells as ReportCell[];
      const cacheDir = path.join(fixture.dir(), "view-cache");
      const server = await startViewServer({ runDir, port: 0, cacheDir, pollMs: 0 });
      try {
        expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
        // A request for another host (a page elsewhere, through DNS rebinding) and any write are refused.
        const port = new URL(server.url).port;
        expect(await statusFor(`${server.url}api/run`)).toBe(200);
        expect(await statusFor(`${server.url}api/run`, { host: `localhost:${port}` })).toBe(200);
        for (const host of ["example.com", `example.com:${port}`, `127.0.0.1.example.com:${port}`, `localhost.example.com:${port}`]) {
          expect(await statusFor(`${server.url}api/run`, { host }), host).toBe(403);
        }
        expect(await statusFor(`${server.url}api/run`, { method: "POST" })).toBe(405);
        expect(await statusFor(`${server.url}api/run`, { method: "POST", host: "example.com" })).toBe(403);
        const { page, errors } = await watchedPage();
        const times: Record<string, number> = {};

        // The arms table: every arm with its Final and interval, sortable.
        times.arms = await open(page, server.url, "[data-testid=arms-table]");
        const armNames = () => page.locator("[data-testid=arms-table] tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-row")));
        expect(await armNames()).toEqual(["reference", "blank", "no-script", "agent"]);
        await page.click("[data-testid=arms-table] th[data-column=final]");
        const byFinal = [...report.arms].sort((a: { final: number }, b: { final: number }) => b.final - a.final).map((arm: { name: string }) => arm.name);
        expect(await armNames()).toEqual(byFinal);
        await expect(page.locator("[data-testid=failure-summary]").innerText()).resolves.toContain("What failed");

        // The tasks page and its filters, checked against report.json's cells.
        times.tasks = await open(page, `${server.url}#/tasks`, "[data-testid=tasks-table]");
        expect(await taskRows(page)).toEqual(TASK_IDS);
        const kind = report.failures.byKind[0].kind as string;
        await page.selectOption("select[name=kind]", kind);
        const withKind = [...new Set(cells.filter((cell) => cell.failure?.kind === kind).map((cell) => cell.taskId))].sort((a, b) => a - b);
        expect(await taskRows(page)).toEqual(withKind);
        await page.selectOption("select[name=kind]", "");
        const first = tasks.find((task) => task.id === TASK_IDS[0])!;
        await page.selectOption("select[name=interaction]", first.meta.interactionComplexity);
        expect(await taskRows(page)).toEqual(
          tasks.filter((task) => task.meta.interactionComplexity === first.meta.interactionComplexity).map((task) => task.id),
        );
        await page.selectOption("select[name=interaction]", "");
        // Free text: words of one task's assertion that no other task of the run has.
        const second = tasks.find((task) => task.id === TASK_IDS[1])!;
        const others = tasks
          .filter((task) => task !== second)
          .flatMap((task) => task.truth.actions.map((action) => `${action.parameters.description} ${action.logical_assertion}`.toLowerCase()));
        const words = second.truth.actions
          .flatMap((action) => action.logical_assertion.split(/\s+/))
          .find((word) => word.length > 5 && !others.some((text) => text.includes(word.toLowerCase())));
        expect(words).toBeDefined();
        await page.fill("input[name=q]", words!);
        expect(await taskRows(page)).toEqual([second.id]);
        await page.fill("input[name=q]", "");
        await page.locator("input[name=arm][value=blank]").uncheck();
        const headers = await page.locator("[data-testid=tasks-table] thead th").allInnerTexts();
        expect(headers.map((text) => text.trim())).not.toContain("blank");
        expect(page.url()).toContain("arms=");

        // A task: every cell of it, and the side by side.
        times.task = await open(page, `${server.url}#/task/${second.id}`, "[data-testid=task-cells]");
        expect(await page.locator("[data-testid=task-cells] tbody tr").count()).toBe(cells.filter((cell) => cell.taskId === second.id).length);

        // A cell: per step the checkpoint, the page's screenshot and the video's aligned state, all loaded.
        times.cell = await open(page, `${server.url}#/cell/reference/0/${second.id}`, "[data-testid=steps] [data-step='0']");
        await loadLazyImages(page);
        const step = page.locator("[data-testid=steps] [data-step='0'] .step-images img");
        expect(await step.count()).toBe(3);
        const widths = await step.evaluateAll((images) => images.map((image) => (image as HTMLImageElement).naturalWidth));
        expect(widths.every((width) => width > 0)).toBe(true);
        await expect(page.locator("[data-testid=trace]").innerText()).resolves.toContain("npx playwright show-trace");
        await expect(page.locator("[data-testid=steps] [data-step='0'] [data-testid=verdict]").innerText()).resolves.toMatch(/judge: (Yes|No)/);

        // An agent cell: its drafts, the critique's defects, the diff between the drafts.
        const agentTaskDir = path.join(runDir, "arms", "agent", "repeat-0", String(first.id));
        const agentRecord = readJson(path.join(agentTaskDir, fs.readdirSync(agentTaskDir)[0]!, "agent.json"));
        times.agentCell = await open(page, `${server.url}#/cell/agent/0/${first.id}`, "[data-testid=agent-timeline]");
        expect(await page.locator("[data-testid=drafts] tr[data-draft]").count()).toBe(agentRecord.drafts.length);
        await expect(page.locator("[data-testid=critique]").first().innerText()).resolves.toContain("nothing reacts to a click");
        await page.waitForSelector("[data-testid=draft-diff] pre");
        await expect(page.locator("[data-testid=draft-diff] pre").innerText()).resolves.toMatch(/^\+.*revised draft/m);

        expect(errors).toEqual([]);
        for (const [name, ms] of Object.entries(times)) console.log(`[view] ${cells.length} cells: ${name} page opened in ${ms} ms (machine shared)`);
        // Thumbnails were made in the cache folder; nothing was written into the run folder.
        expect(fs.readdirSync(path.join(cacheDir, "thumbs")).length).toBeGreaterThan(0);
        expect(snapshot(runDir)).toEqual(before);
        await page.close();
      } finally {
        await server.close();
      }
    },
    TEST_MS,
  );

  it(
    "refuses a cache folder inside the run folder, and follows cells written while it runs",
    async () => {
      await expect(startViewServer({ runDir, port: 0, cacheDir: path.join(runDir, "thumbs") })).rejects.toThrow(/inside the run folder/);
      const liveDir = path.join(fixture.dir(), "live");
      fs.cpSync(runDir, liveDir, { recursive: true });
      // One finished cell's record set aside, as if the run had not written it yet.
      const cellFile = path.join(liveDir, "arms", "blank", "repeat-0", String(TASK_IDS[1]), "blank", "cell.json");
      const record = fs.readFileSync(cellFile, "utf8");
      fs.rmSync(cellFile);
      const server = await startViewServer({ runDir: liveDir, port: 0, cacheDir: path.join(fixture.dir(), "view-cache"), pollMs: 200 });
      try {
        const { page, errors } = await watchedPage();
        await open(page, server.url, "[data-testid=arms-table]");
        const total = readJson(path.join(liveDir, "run.json")).cells.length as number;
        await expect(page.locator("[data-testid=progress]").innerText()).resolves.toBe(`${total - 1} of ${total} cells`);
        // Written as iwr run writes it: a temporary file beside it, then a rename.
        fs.writeFileSync(`${cellFile}.tmp`, record);
        fs.renameSync(`${cellFile}.tmp`, cellFile);
        await page.waitForFunction((text) => document.querySelector("[data-testid=progress]")?.textContent === text, `${total} of ${total} cells`, {
          timeout: 10_000,
        });
        expect(errors).toEqual([]);
        await page.close();
      } finally {
        await server.close();
      }
    },
    TEST_MS,
  );
});

describe("at benchmark scale: 4,000 cells made from the run's own", () => {
  let synthDir: string;
  beforeAll(async () => {
    synthDir = path.join(fixture.dir(), "synthetic");
    const printed = await runScript(["--from", runDir, "--out", synthDir, "--cells", String(SYNTHETIC_CELLS), "--tasks", "100", "--repeats", "3"]);
    console.log(`[view] ${printed.trim()}`);
  }, TEST_MS);

  it(
    "report.html grows by at most ~2 KB a cell",
    async () => {
      const small = fs.statSync(path.join(runDir, "report.html")).size;
      const smallCells = readJson(path.join(runDir, "report.json")).cells.length as number;
      const { data, htmlBytes } = await writeReport(synthDir);
      expect(data.cells).toHaveLength(SYNTHETIC_CELLS);
      console.log(`[view] report.html: ${small} bytes for ${smallCells} cells, ${htmlBytes} bytes for ${SYNTHETIC_CELLS} cells`);
      expect((htmlBytes - small) / (SYNTHETIC_CELLS - smallCells)).toBeLessThanOrEqual(2048);
    },
    TEST_MS,
  );

  it(
    "opens every page with no console error (load times printed), filters at scale, and writes nothing into the run",
    async () => {
      const before = snapshot(synthDir);
      const report = readJson(path.join(synthDir, "report.json"));
      const cells = report.cells as ReportCell[];
      const server = await startViewServer({ runDir: synthDir, port: 0, cacheDir: path.join(fixture.dir(), "view-cache"), pollMs: 0 });
      try {
        console.log(`[view] ${SYNTHETIC_CELLS} cells: read the run folder in ${server.indexMs} ms`);
        expect(server.index.cells()).toHaveLength(SYNTHETIC_CELLS);
        const { page, errors } = await watchedPage();
        const times: Record<string, number> = {};
        times.arms = await open(page, server.url, "[data-testid=arms-table]");
        expect(await page.locator("[data-testid=arms-table] tbody tr").count()).toBe(report.arms.length);
        times.tasks = await open(page, `${server.url}#/tasks`, "[data-testid=tasks-table] tbody tr");
        expect(await taskRows(page)).toHaveLength(100);
        const kind = report.failures.byKind[0].kind as string;
        times.tasksFiltered = await open(page, `${server.url}#/tasks?kind=${kind}`, "[data-testid=tasks-table] tbody tr");
        const withKind = [...new Set(cells.filter((cell) => cell.failure?.kind === kind).map((cell) => cell.taskId))].sort((a, b) => a - b);
        expect(await taskRows(page)).toEqual(withKind);
        times.task = await open(page, `${server.url}#/task/57`, "[data-testid=task-cells] tbody tr");
        expect(await page.locator("[data-testid=task-cells] tbody tr").count()).toBe(cells.filter((cell) => cell.taskId === 57).length);
        const sample = cells.find((cell) => cell.taskId === 57 && cell.arm.startsWith("reference"))!;
        times.cell = await open(page, `${server.url}#/cell/${sample.arm}/${sample.repeat}/57`, "[data-testid=steps] [data-step='0']");
        await loadLazyImages(page);
        const widths = await page
          .locator("[data-testid=steps] [data-step='0'] .step-images img")
          .evaluateAll((images) => images.map((image) => (image as HTMLImageElement).naturalWidth));
        expect(widths.length).toBe(3);
        expect(widths.every((width) => width > 0)).toBe(true);
        expect(errors).toEqual([]);
        for (const [name, ms] of Object.entries(times)) console.log(`[view] ${SYNTHETIC_CELLS} cells: ${name} page opened in ${ms} ms (machine shared)`);
        expect(snapshot(synthDir)).toEqual(before);
        await page.close();
      } finally {
        await server.close();
      }
    },
    TEST_MS,
  );
});
